#pragma once
// The dialects Kiln's IR is made of (builtin, arith, tile, kern), installed into the IR core's op
// registry (kiln/ir/op_registry.h). Call once before building or parsing IR with the IR core
// directly; ProgramBuilder, kiln::compile and the tools call it themselves. Idempotent and
// thread-safe.
namespace kiln {

void registerAllDialects();

}  // namespace kiln
