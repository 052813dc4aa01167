#pragma once
// Finding and running a SASS disassembler (nvdisasm, or cuobjdump as a fallback).
//
// Kiln checks the instruction mix of what it generates on machines without a GPU, so it needs a
// disassembler, but the CUDA toolkit is not always installed whole: on many machines nvdisasm and
// cuobjdump come from NVIDIA's PyPI wheels (pip install nvidia-cuda-nvdisasm). The search, in order:
//
//   1. $KILN_NVDISASM, then $KILN_CUOBJDUMP (an explicit path; if set but unusable, that is an
//      error rather than a silent fallback, since the user asked for that file)
//   2. nvdisasm in each directory below, then cuobjdump in each:
//      the directories of $PATH, $CUDA_HOME/bin, /usr/local/cuda/bin, and the bin/ folders of
//      NVIDIA's Python wheels (<site-packages>/nvidia/cu13/bin, cu12/bin, cuda_nvdisasm/bin,
//      cuda_cuobjdump/bin), located by asking `python3` where the `nvidia` package lives.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "kiln/ir/diagnostics.h"

namespace kiln::backend {

struct Disassembler {
  enum class Kind { Nvdisasm, Cuobjdump };
  Kind kind = Kind::Nvdisasm;
  std::filesystem::path path;
  std::string foundVia;  // "KILN_NVDISASM", "PATH", "CUDA_HOME", "/usr/local/cuda", "python wheel"
};

struct DisassemblerSearch {
  struct Dir {
    std::filesystem::path path;
    std::string via;
  };
  std::optional<std::string> nvdisasmOverride;   // $KILN_NVDISASM
  std::optional<std::string> cuobjdumpOverride;  // $KILN_CUOBJDUMP
  std::vector<Dir> dirs;

  // The search described above, from the current environment. The Python wheel directories are
  // asked for once per process (it costs a python3 start).
  static DisassemblerSearch fromEnvironment();
};

// nullopt with an error diagnostic that says what to install when nothing is found.
std::optional<Disassembler> findDisassembler(const DisassemblerSearch& search, ir::DiagnosticEngine& diag);
std::optional<Disassembler> findDisassembler(ir::DiagnosticEngine& diag);

// The disassembly of `cubin`: the cubin is written to a private temporary file, which is removed.
std::optional<std::string> disassemble(const Disassembler& tool, const std::vector<char>& cubin,
                                       ir::DiagnosticEngine& diag);

}  // namespace kiln::backend
