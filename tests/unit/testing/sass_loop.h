#pragma once
// The instruction mix of a kernel's main loop, read from its SASS: opcode counts inside the
// longest backward branch (the K loop; the strategies mark it nounroll, so ptxas keeps one body
// per iteration). The other backward branch of every kernel is the one-line self-branch that ends
// the function. Opcodes are kept whole ("HMMA.16816.F32.BF16"), predicate guards dropped.
#include <map>
#include <string>
#include <vector>

namespace kiln::testing {

std::map<std::string, int> loopOpcodes(const std::string& sass);
// The same loop's opcodes in program order.
std::vector<std::string> loopSequence(const std::string& sass);

// The opcode counts of a persistent kernel's K loop: of the backward branches whose range holds
// an opcode starting with `mma` and no store (ST*, UTMASTG: the epilogue, and a tile loop around
// the K loop, are out), the one with the most of them, then the fewest instructions (a pair of K
// steps before the tail of one). Empty if none.
std::map<std::string, int> kLoopOpcodes(const std::string& sass, const std::string& mma);

// Sum of the counts of opcodes that start with `prefix`.
int countPrefix(const std::map<std::string, int>& ops, const std::string& prefix);

}  // namespace kiln::testing
