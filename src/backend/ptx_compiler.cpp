#include "backend/ptx_compiler.h"

#include <fmt/format.h>

#include "backend/ptxas_log.h"

#if defined(KILN_HAVE_NVPTXCOMPILER)
#include <nvPTXCompiler.h>
#endif

namespace kiln::backend {

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
