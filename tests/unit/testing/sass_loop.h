#pragma once
// The instruction mix of a kernel's main loop, read from its SASS: opcode counts inside the
// longest backward branch (the K loop; the strategies mark it nounroll, so ptxas keeps one body
// per iteration). The other backward branch of every kernel is the one-line self-branch that ends
// the function. Opcodes are kept whole ("HMMA.16816.F32.BF16"), predicate guards dropped.
#include <map>
#include <string>

namespace kiln::testing {

std::map<std::string, int> loopOpcodes(const std::string& sass);

// Sum of the counts of opcodes that start with `prefix`.
int countPrefix(const std::map<std::string, int>& ops, const std::string& prefix);

// R2UR instructions on the issue path of a warpgroup's wgmma batches: between a WARPGROUP.ARRIVE
// and the HGMMA/QGMMA that closes its batch (the one with gsb0), anywhere in the kernel. wgmma takes
// its descriptors from uniform registers; each R2UR there means a descriptor was built on the vector
// pipe and moved over, as it was while ptxas could not prove the warpgroup index warp-uniform.
int r2urInWgmmaBatches(const std::string& sass);

}  // namespace kiln::testing
