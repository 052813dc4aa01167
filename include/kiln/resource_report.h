#pragma once
// What ptxas says a kernel entry costs: registers, barriers, stack, spills, static shared memory
// and the constant bank. Every compile result carries one report per entry (DESIGN.md: "the report
// is part of every compile result"), so gates such as "no spills" can be checked without a GPU.
#include <map>
#include <string>
#include <string_view>

namespace kiln::backend {

struct ResourceReport {
  std::string kernel;
  int registers = 0;
  int barriers = 0;
  int stackFrameBytes = 0;
  int spillStoreBytes = 0;
  int spillLoadBytes = 0;
  int sharedBytes = 0;  // static shared memory the kernel declares (excludes the system-reserved part)
  int constBytes = 0;   // cmem[0]: kernel parameters and driver constants

  bool spills() const { return spillStoreBytes > 0 || spillLoadBytes > 0; }
  // "gemm: 168 regs, 1 barriers, 56 B stack, 0 B spill stores, 0 B spill loads, 4096 B smem, 536 B cmem[0]"
  std::string str() const;
  bool operator==(const ResourceReport&) const = default;
};

// Parses the verbose info log that nvJitLink returns with "-verbose" into one report per kernel
// entry. Two sources are read:
//   ptxas's own lines   "ptxas info    : Compiling entry function 'k' for 'sm_90a'"
//                       "ptxas info    : Function properties for k"
//                       "ptxas         .     56 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads"
//                       "ptxas info    : Used 168 registers, used 1 barriers, 4096 bytes smem, 360 bytes cmem[0]"
//   the linker summary  "info    : Function properties for 'k':"
//                       "info    : used 168 registers, used 1 barriers, 56 stack, 5120 bytes smem, 536 bytes cmem[0], 0 bytes lmem"
// ptxas's figures win. ptxas omits zero shared memory and, for sm_90 and later, cmem[0] altogether;
// the linker fills what ptxas leaves out, except shared memory, where the linker adds the 1 KiB
// the system reserves on sm_90+ and so does not mean what `sharedBytes` means.
// Only kernel entries are reported when ptxas names them; device functions are not.
std::map<std::string, ResourceReport> parseResourceReports(std::string_view infoLog);

}  // namespace kiln::backend
