#include "backend/ptx_compiler.h"

#include <cstring>

#include <fmt/format.h>

#include "backend/ptxas_log.h"

#if defined(KILN_HAVE_NVPTXCOMPILER)
#include <nvPTXCompiler.h>
#endif

namespace kiln::backend {

// The size of each kernel's parameter constant bank, read from the cubin (an ELF64 file whose
// section ".nv.constant0.<kernel>" is that bank). ptxas leaves cmem[0] out of its report for sm_90
// and later, and without nvJitLink's linker summary nothing else says it.
std::map<std::string, int> constantBankSizes(const std::vector<char>& elf) {
  std::map<std::string, int> sizes;
  auto u16 = [&](size_t at) { uint16_t v = 0; if (at + 2 <= elf.size()) std::memcpy(&v, &elf[at], 2); return v; };
  auto u32 = [&](size_t at) { uint32_t v = 0; if (at + 4 <= elf.size()) std::memcpy(&v, &elf[at], 4); return v; };
  auto u64 = [&](size_t at) { uint64_t v = 0; if (at + 8 <= elf.size()) std::memcpy(&v, &elf[at], 8); return v; };
  if (elf.size() < 64 || std::memcmp(elf.data(), "\x7f" "ELF", 4) != 0 || elf[4] != 2) return sizes;
  uint64_t shoff = u64(0x28);
  uint16_t shentsize = u16(0x3a), shnum = u16(0x3c), shstrndx = u16(0x3e);
  if (shentsize < 64 || shstrndx >= shnum || shoff + uint64_t(shnum) * shentsize > elf.size()) return sizes;
  uint64_t strtab = u64(shoff + uint64_t(shstrndx) * shentsize + 0x18);
  const std::string prefix = ".nv.constant0.";
  for (uint16_t i = 0; i < shnum; ++i) {
    size_t hdr = size_t(shoff + uint64_t(i) * shentsize);
    uint64_t nameAt = strtab + u32(hdr);
    if (nameAt >= elf.size()) continue;
    std::string name(&elf[size_t(nameAt)], strnlen(&elf[size_t(nameAt)], elf.size() - size_t(nameAt)));
    if (name.rfind(prefix, 0) == 0) sizes[name.substr(prefix.size())] = int(u64(hdr + 0x20));
  }
  return sizes;
}

std::vector<std::string> ptxCompilerOptions(std::string_view arch, const AssembleOptions& o) {
  // ptxas's own spelling: the library takes ptxas command-line options.
  std::vector<std::string> opts = {fmt::format("--gpu-name={}", arch), "--verbose", fmt::format("-O{}", o.optLevel)};
  if (o.maxRegisters) opts.push_back(fmt::format("--maxrregcount={}", *o.maxRegisters));
  if (o.lineInfo) opts.push_back("--generate-line-info");
  for (const std::string& x : o.ptxasOptions) opts.push_back(x);
  return opts;
}

#if defined(KILN_HAVE_NVPTXCOMPILER)

namespace {

struct Handle {
  nvPTXCompilerHandle h = nullptr;
  ~Handle() {
    if (h) nvPTXCompilerDestroy(&h);
  }
};

std::string readLog(nvPTXCompilerHandle h, nvPTXCompileResult (*sizeFn)(nvPTXCompilerHandle, size_t*),
                    nvPTXCompileResult (*logFn)(nvPTXCompilerHandle, char*)) {
  size_t size = 0;
  if (sizeFn(h, &size) != NVPTXCOMPILE_SUCCESS || size == 0) return {};
  std::string s(size, '\0');
  if (logFn(h, s.data()) != NVPTXCOMPILE_SUCCESS) return {};
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

}  // namespace

bool havePtxCompiler() { return true; }

std::string ptxCompilerVersion() {
  unsigned major = 0, minor = 0;
  if (nvPTXCompilerGetVersion(&major, &minor) != NVPTXCOMPILE_SUCCESS) return "unknown";
  return fmt::format("{}.{}", major, minor);
}

std::optional<AssembledKernel> assembleWithPtxCompiler(const std::string& ptx, std::string_view arch,
                                                       ir::DiagnosticEngine& diag, const AssembleOptions& options) {
  ir::Location ptxLoc = ir::Location::unknown();
  Handle handle;
  if (nvPTXCompilerCreate(&handle.h, ptx.size(), ptx.data()) != NVPTXCOMPILE_SUCCESS) {
    diag.error(ptxLoc) << "the PTX compiler library could not start a compile for " << arch;
    return std::nullopt;
  }
  std::vector<std::string> opts = ptxCompilerOptions(arch, options);
  std::vector<const char*> argv;
  for (const std::string& o : opts) argv.push_back(o.c_str());
  nvPTXCompileResult r = nvPTXCompilerCompile(handle.h, int(argv.size()), argv.data());

  AssembledKernel k;
  k.arch = std::string(arch);
  k.infoLog = readLog(handle.h, nvPTXCompilerGetInfoLogSize, nvPTXCompilerGetInfoLog);
  std::string errorLog = readLog(handle.h, nvPTXCompilerGetErrorLogSize, nvPTXCompilerGetErrorLog);
  PtxSourceMap source(ptx);
  size_t errorsBefore = diag.errorCount();
  std::vector<PtxasMessage> messages = parsePtxasMessages(k.infoLog);
  std::vector<PtxasMessage> errors = parsePtxasMessages(errorLog);
  messages.insert(messages.end(), errors.begin(), errors.end());
  k.warnings = reportPtxasMessages(messages, source, options.ptxName, arch, diag);
  if (r != NVPTXCOMPILE_SUCCESS) {
    if (diag.errorCount() == errorsBefore)
      diag.error(ptxLoc) << "the PTX compiler library failed to assemble the PTX for " << arch << " (result "
                         << int(r) << ")" << (errorLog.empty() ? "" : ":\n") << errorLog;
    return std::nullopt;
  }
  size_t size = 0;
  if (nvPTXCompilerGetCompiledProgramSize(handle.h, &size) != NVPTXCOMPILE_SUCCESS || size == 0) {
    diag.error(ptxLoc) << "the PTX compiler library reported success for " << arch << " but produced no cubin";
    return std::nullopt;
  }
  k.cubin.resize(size);
  if (nvPTXCompilerGetCompiledProgram(handle.h, k.cubin.data()) != NVPTXCOMPILE_SUCCESS) {
    diag.error(ptxLoc) << "the PTX compiler library could not return the cubin for " << arch;
    return std::nullopt;
  }
  k.resources = parseResourceReports(k.infoLog);
  for (const auto& [kernel, bytes] : constantBankSizes(k.cubin))
    if (auto it = k.resources.find(kernel); it != k.resources.end() && it->second.constBytes == 0)
      it->second.constBytes = bytes;
  return k;
}

#else

bool havePtxCompiler() { return false; }
std::string ptxCompilerVersion() { return "none"; }
std::optional<AssembledKernel> assembleWithPtxCompiler(const std::string&, std::string_view arch,
                                                       ir::DiagnosticEngine& diag, const AssembleOptions&) {
  diag.error(ir::Location::unknown()) << "Kiln was built without the PTX compiler library; cannot assemble for "
                                      << arch << " with it (pip install nvidia-nvptxcompiler, then rebuild)";
  return std::nullopt;
}

#endif

}  // namespace kiln::backend
