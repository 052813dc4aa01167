#include "backend/assembler.h"

#include <array>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nvJitLink.h>

#include "backend/ptx_compiler.h"
#include "backend/ptxas_log.h"

namespace kiln::backend {
namespace {

// sm_90 is plain Hopper (portable code such as mma.sync); sm_90a adds wgmma and setmaxnreg.
constexpr std::array<std::string_view, 6> kArchs = {"sm_80", "sm_89", "sm_90", "sm_90a", "sm_100a", "sm_120"};

const char* resultName(nvJitLinkResult r) {
  switch (r) {
    case NVJITLINK_SUCCESS: return "NVJITLINK_SUCCESS";
    case NVJITLINK_ERROR_UNRECOGNIZED_OPTION: return "NVJITLINK_ERROR_UNRECOGNIZED_OPTION";
    case NVJITLINK_ERROR_MISSING_ARCH: return "NVJITLINK_ERROR_MISSING_ARCH";
    case NVJITLINK_ERROR_INVALID_INPUT: return "NVJITLINK_ERROR_INVALID_INPUT";
    case NVJITLINK_ERROR_PTX_COMPILE: return "NVJITLINK_ERROR_PTX_COMPILE";
    case NVJITLINK_ERROR_NVVM_COMPILE: return "NVJITLINK_ERROR_NVVM_COMPILE";
    case NVJITLINK_ERROR_INTERNAL: return "NVJITLINK_ERROR_INTERNAL";
    case NVJITLINK_ERROR_THREADPOOL: return "NVJITLINK_ERROR_THREADPOOL";
    case NVJITLINK_ERROR_UNRECOGNIZED_INPUT: return "NVJITLINK_ERROR_UNRECOGNIZED_INPUT";
    case NVJITLINK_ERROR_FINALIZE: return "NVJITLINK_ERROR_FINALIZE";
    case NVJITLINK_ERROR_NULL_INPUT: return "NVJITLINK_ERROR_NULL_INPUT";
    case NVJITLINK_ERROR_INCOMPATIBLE_OPTIONS: return "NVJITLINK_ERROR_INCOMPATIBLE_OPTIONS";
    case NVJITLINK_ERROR_INCORRECT_INPUT_TYPE: return "NVJITLINK_ERROR_INCORRECT_INPUT_TYPE";
    case NVJITLINK_ERROR_ARCH_MISMATCH: return "NVJITLINK_ERROR_ARCH_MISMATCH";
    case NVJITLINK_ERROR_OUTDATED_LIBRARY: return "NVJITLINK_ERROR_OUTDATED_LIBRARY";
    case NVJITLINK_ERROR_MISSING_FATBIN: return "NVJITLINK_ERROR_MISSING_FATBIN";
    case NVJITLINK_ERROR_UNRECOGNIZED_ARCH: return "NVJITLINK_ERROR_UNRECOGNIZED_ARCH";
    case NVJITLINK_ERROR_UNSUPPORTED_ARCH: return "NVJITLINK_ERROR_UNSUPPORTED_ARCH";
    case NVJITLINK_ERROR_LTO_NOT_ENABLED: return "NVJITLINK_ERROR_LTO_NOT_ENABLED";
  }
  return "unknown nvJitLink result";
}

// Owns an nvJitLink handle so every exit path destroys it.
struct Handle {
  nvJitLinkHandle h = nullptr;
  ~Handle() {
    if (h) nvJitLinkDestroy(&h);
  }
};

using LogSizeFn = nvJitLinkResult (*)(nvJitLinkHandle, size_t*);
using LogFn = nvJitLinkResult (*)(nvJitLinkHandle, char*);

std::string readLog(nvJitLinkHandle h, LogSizeFn sizeFn, LogFn logFn) {
  size_t size = 0;
  if (sizeFn(h, &size) != NVJITLINK_SUCCESS || size == 0) return {};
  std::string s(size, '\0');
  if (logFn(h, s.data()) != NVJITLINK_SUCCESS) return {};
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

}  // namespace

std::span<const std::string_view> supportedArchs() { return kArchs; }

bool isSupportedArch(std::string_view arch) {
  for (std::string_view a : kArchs)
    if (a == arch) return true;
  return false;
}

std::vector<std::string> nvJitLinkOptions(std::string_view arch, const AssembleOptions& o) {
  // "-verbose" makes nvJitLink forward ptxas's resource lines ("Used N registers, ...") and add
  // its own per-function summary; both end up in the info log, which is all we need.
  std::vector<std::string> opts = {fmt::format("-arch={}", arch), "-verbose", fmt::format("-O{}", o.optLevel)};
  if (o.maxRegisters) opts.push_back(fmt::format("-maxrregcount={}", *o.maxRegisters));
  if (o.lineInfo) opts.push_back("-lineinfo");
  for (const std::string& x : o.ptxasOptions) opts.push_back("-Xptxas=" + x);
  return opts;
}

AssemblerKind assemblerFor(std::string_view arch, const AssembleOptions& o) {
  if (o.assembler != AssemblerKind::Auto) return o.assembler;
  return arch == "sm_90a" && havePtxCompiler() ? AssemblerKind::PtxCompiler : AssemblerKind::NvJitLink;
}

std::string nvJitLinkLibraryVersion() {
  unsigned major = 0, minor = 0;
  if (nvJitLinkVersion(&major, &minor) != NVJITLINK_SUCCESS) return "unknown";
  return fmt::format("{}.{}", major, minor);
}

std::optional<AssembledKernel> assemble(const std::string& ptx, std::string_view arch,
                                        ir::DiagnosticEngine& diag, const AssembleOptions& options) {
  ir::Location ptxLoc = ir::Location::unknown();
  if (!isSupportedArch(arch)) {
    diag.error(ptxLoc) << "unknown target architecture '" << arch
                       << "'; Kiln can assemble for " << fmt::format("{}", fmt::join(kArchs, ", "));
    return std::nullopt;
  }
  if (options.optLevel < 0 || options.optLevel > 3) {
    diag.error(ptxLoc) << "ptxas optimization level must be 0..3, got " << options.optLevel;
    return std::nullopt;
  }

  if (assemblerFor(arch, options) == AssemblerKind::PtxCompiler)
    return assembleWithPtxCompiler(ptx, arch, diag, options);

  std::vector<std::string> opts = nvJitLinkOptions(arch, options);
  std::vector<const char*> argv;
  for (const std::string& o : opts) argv.push_back(o.c_str());
  Handle handle;
  nvJitLinkResult r = nvJitLinkCreate(&handle.h, static_cast<uint32_t>(argv.size()), argv.data());
  if (r != NVJITLINK_SUCCESS) {
    // Our own option list is well formed, but -Xptxas options come from the user.
    diag.error(ptxLoc) << "nvJitLink rejected the options [" << fmt::format("{}", fmt::join(opts, " "))
                       << "]: " << resultName(r);
    return std::nullopt;
  }

  // ptxas runs inside nvJitLinkAddData for PTX input, so a PTX error surfaces here, not in
  // nvJitLinkComplete (which then still "succeeds" with a useless cubin). Check both.
  r = nvJitLinkAddData(handle.h, NVJITLINK_INPUT_PTX, ptx.data(), ptx.size(), options.ptxName.c_str());
  if (r == NVJITLINK_SUCCESS) r = nvJitLinkComplete(handle.h);

  AssembledKernel k;
  k.arch = std::string(arch);
  k.infoLog = readLog(handle.h, nvJitLinkGetInfoLogSize, nvJitLinkGetInfoLog);
  std::string errorLog = readLog(handle.h, nvJitLinkGetErrorLogSize, nvJitLinkGetErrorLog);

  PtxSourceMap source(ptx);
  size_t errorsBefore = diag.errorCount();
  std::vector<PtxasMessage> messages = parsePtxasMessages(k.infoLog);
  std::vector<PtxasMessage> errors = parsePtxasMessages(errorLog);
  messages.insert(messages.end(), errors.begin(), errors.end());
  k.warnings = reportPtxasMessages(messages, source, options.ptxName, arch, diag);

  if (r != NVJITLINK_SUCCESS) {
    if (diag.errorCount() == errorsBefore)  // nothing specific was said; say what we know
      diag.error(ptxLoc) << "nvJitLink failed to assemble the PTX for " << arch << " ("
                         << resultName(r) << ")" << (errorLog.empty() ? "" : ":\n") << errorLog;
    return std::nullopt;
  }

  // Not a user error and not a Kiln bug either: the library misbehaved. Say so rather than abort.
  size_t size = 0;
  if (nvJitLinkGetLinkedCubinSize(handle.h, &size) != NVJITLINK_SUCCESS || size == 0) {
    diag.error(ptxLoc) << "nvJitLink reported success for " << arch << " but produced no cubin";
    return std::nullopt;
  }
  k.cubin.resize(size);
  if (nvJitLinkGetLinkedCubin(handle.h, k.cubin.data()) != NVJITLINK_SUCCESS) {
    diag.error(ptxLoc) << "nvJitLink reported success for " << arch << " but could not return the cubin";
    return std::nullopt;
  }
  k.resources = parseResourceReports(k.infoLog);
  return k;
}

}  // namespace kiln::backend
