#pragma once
// PTX to cubin, in-process, through nvJitLink (DESIGN.md, "PTX, assembly, runtime").
//
// nvJitLink runs ptxas inside this process, so Kiln needs no toolkit binaries at run time and gets
// ptxas's resource report ("-verbose") with every compile. User errors — an unknown architecture,
// PTX that ptxas rejects — come back as diagnostics; ptxas's rejections point at the Kiln op that
// emitted the PTX (see ptxas_log.h).
//
// Known limitation (nvJitLink 13.0): nvJitLink runs ptxas in relocatable mode (--compile-only),
// and there ptxas ignores setmaxnreg ("(C7504) Potential Performance Loss: 'setmaxnreg' ignored to
// maintain compatibility across compilation units"), even with .maxnreg, where whole-program ptxas
// emits USETMAXREG. The advisory is surfaced as a warning; no nvJitLink option changes it. So
// sm_90a, the one target whose kernels use setmaxnreg, is assembled by the PTX compiler library
// instead (ptx_compiler.h) when Kiln is built with it; AssembleOptions::assembler can force either.
//
// Thread safety: assemble() may run on several threads at once, each with its own
// DiagnosticEngine (an engine is not thread-safe).
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/ir/diagnostics.h"
#include "kiln/resource_report.h"

namespace kiln::backend {

enum class AssemblerKind { Auto, NvJitLink, PtxCompiler };

struct AssembleOptions {
  AssemblerKind assembler = AssemblerKind::Auto;  // Auto: the PTX compiler for sm_90a when built with it
  int optLevel = 3;                       // ptxas -O level, 0..3
  std::optional<int> maxRegisters;        // -maxrregcount
  bool lineInfo = false;                  // -lineinfo
  std::vector<std::string> ptxasOptions;  // each passed as -Xptxas=<option>
  std::string ptxName = "kiln.ptx";       // names the PTX in nvJitLink's log and in diagnostics
};

struct AssembledKernel {
  std::string arch;
  std::vector<char> cubin;
  std::map<std::string, ResourceReport> resources;  // one per kernel entry
  std::vector<ir::Diagnostic> warnings;  // ptxas warnings and performance advisories, as reported
  std::string infoLog;                // nvJitLink's verbose log, verbatim
};

// The architectures Kiln targets: sm_80, sm_89, sm_90, sm_90a, sm_100a, sm_120.
std::span<const std::string_view> supportedArchs();
bool isSupportedArch(std::string_view arch);

// The exact option list passed to nvJitLinkCreate. Exposed because it is part of the cache key.
std::vector<std::string> nvJitLinkOptions(std::string_view arch, const AssembleOptions& options);

// Which assembler assemble() uses for `arch` with `options`.
AssemblerKind assemblerFor(std::string_view arch, const AssembleOptions& options);

// "13.0": the nvJitLink library actually loaded, which may differ from the headers built against.
std::string nvJitLinkLibraryVersion();

// Assembles `ptx` for `arch`. On failure returns nullopt with at least one error in `diag`.
// Warnings (ptxas warnings and "(Cnnnn) Potential Performance Loss" advisories) go to `diag` as
// warnings and are also kept in the result.
std::optional<AssembledKernel> assemble(const std::string& ptx, std::string_view arch,
                                        ir::DiagnosticEngine& diag,
                                        const AssembleOptions& options = {});

}  // namespace kiln::backend
