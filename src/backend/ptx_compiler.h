#pragma once
// PTX to cubin through NVIDIA's PTX compiler library (libnvptxcompiler_static, the in-process
// ptxas), the assembly path for sm_90a.
//
// Why a second assembler. nvJitLink runs ptxas in relocatable mode (--compile-only), where ptxas
// ignores setmaxnreg ("(C7504) ... 'setmaxnreg' ignored to maintain compatibility across
// compilation units") whatever the PTX says, and warp-specialized sm_90a kernels depend on
// setmaxnreg to give their MMA warpgroups the registers the producer does not need. The PTX compiler
// library compiles a whole program, as standalone ptxas does, and honours setmaxnreg when the
// kernel states its register count at entry (.maxnreg; else ptxas says C7508 and ignores it).
// Checked on the CPU: the gates find USETMAXREG in the SASS (tests/unit/backend/, tests/unit/ops/).
//
// The library comes from NVIDIA's PyPI wheel nvidia-nvptxcompiler, pinned to the toolkit's version
// (scripts/install-deps.sh) and linked statically, so nothing is needed at run time. A build
// without it (KILN_HAVE_NVPTXCOMPILER undefined) assembles sm_90a with nvJitLink, and the
// setmaxnreg advisory is reported as a warning.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backend/assembler.h"

namespace kiln::backend {

// True when Kiln was built with the PTX compiler library.
bool havePtxCompiler();
// "13.0", or "none".
std::string ptxCompilerVersion();
// The exact option list passed to nvPTXCompilerCompile (part of the cache key).
std::vector<std::string> ptxCompilerOptions(std::string_view arch, const AssembleOptions& options);
// Each kernel's cmem[0] size from a cubin's ".nv.constant0.<kernel>" ELF sections (ptxas does not
// report it for sm_90+); empty when the image is not a well-formed ELF64 file.
std::map<std::string, int> constantBankSizes(const std::vector<char>& cubin);
// Like assemble(); the caller has already checked the arch and options.
std::optional<AssembledKernel> assembleWithPtxCompiler(const std::string& ptx, std::string_view arch,
                                                       ir::DiagnosticEngine& diag, const AssembleOptions& options);

}  // namespace kiln::backend
