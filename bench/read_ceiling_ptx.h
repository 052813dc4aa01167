#pragma once
// The PTX of the read-ceiling kernels (read_ceiling.h), kept apart from the CUDA runtime so that a
// CPU test can assemble it and read its SASS (tests/unit/bench/read_ceiling_ptx_test.cpp).
#include <string>

namespace kiln::bench {

// One module, five entries, each reading a buffer once and keeping nothing:
//  - kiln_read_ceiling(src, n16, out) and kiln_read_ceiling_stream(...): grid-stride 16-byte
//    ld.global.nc loads, four in flight per thread; `n16` counts 16-byte vectors, `out` is written
//    only if the XOR of everything read equals a constant (so the loads stay).
//  - kiln_read_ceiling_tma(src, bytes, chunk, stages) and kiln_read_ceiling_tma_stream(...): one
//    thread per block keeps `stages` (at most kReadTmaMaxStages) bulk copies of `chunk` bytes in
//    flight into a ring of dynamic shared memory (stages x chunk bytes), block b reading chunks b,
//    b + grid, ... The GEMM's operands arrive this way (TMA), so this is its engine's own floor.
//    `bytes` and `chunk` are multiples of 16.
//  - kiln_tile_stream(map_b, map_a, boxes, stages, burst, flags, strips, out): the GEMM's operand stream
//    without its math (kiln_stream_bench): block b copies `boxes` 64 x 64 bf16 boxes of a 2D
//    tensor map (8 KB, 128-byte swizzle) along strip b into a ring of `stages`, the GEMM's
//    producer / consumer protocol or bare copies, `burst` at a time, optionally with an A box per
//    stage, or with the grid sharing all `strips` x `boxes` evenly (stream-K), or ending with an
//    8 KB bulk store per block to `out` (flags: read_ceiling_ptx.cpp). 64 threads a block.
// The _stream entries and the tile stream mark every line they bring into L2 evict_first, as
// l2_hint=reuse does for an operand the GEMM streams.
inline constexpr int kReadTmaMaxStages = 32;
std::string readCeilingPtx();

}  // namespace kiln::bench
