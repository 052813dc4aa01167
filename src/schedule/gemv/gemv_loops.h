#pragma once
// Internal to the gemv strategy (contract in gemv.h): the geometry of a block and the two K loops
// that leave each thread's share of the block's sums in the shared-memory buffer.
#include <vector>

#include "schedule/sm80_context.h"

namespace kiln::gemv {

struct Geometry {
  bool kMajor = false;  // B stored [N][K]: the K path
  int T = 256;          // threads per block
  int bm = 1, bn = 64;  // rows of M, columns of N per block
  int V = 8;            // B elements per load along its contiguous dim
  int VA = 1;           // A elements per load along K (K path, row-major A), else 1
  // A elements per load along M (a column-major A, whose bm elements of one k are contiguous), else
  // 1: a power of two dividing bm, as wide as align_a allows (A's rows, M long, aligned to it).
  int VM = 1;
  int U = 4;            // loads of B per thread and step (and N rows: R of them each on the K path)
  int lanes = 32;       // threads along B's contiguous dim: bn / V (N path) or row_threads (K path)
  // N path, strided B with V > 1: N need not be a multiple of V (the leading dimension keeps rows
  // aligned); the block over N's end loads its columns one element at a time.
  bool nTail = false;
  int groups() const { return T / lanes; }  // N path: rows of threads along K; K path: N-row groups
  int rowsPerGroup() const { return bn / groups(); }  // K path: N rows each group owns
  int warps() const { return T / 32; }
  // Shared memory: on the N path the warps' partial sums, [warps][bm][cols] f32, then (both paths)
  // the block's sums, [bm][cols] f32; cols is bn rounded up to 32 (128-byte rows: a stage of
  // shared memory is a multiple of 128 bytes).
  int cols() const { return (bn + 31) / 32 * 32; }
  int64_t sumsBytes() const { return int64_t(bm) * cols() * 4; }
  int64_t partialsBytes() const { return kMajor ? 0 : warps() * sumsBytes(); }
  int64_t smemBytes() const { return partialsBytes() + sumsBytes(); }
};

// The block's share of K: [begin, end) (null: 0 and K); with split_k a slice, whose sums leave out
// the program's initial value (addInit false: it is added once, to the slices' total).
struct KRange {
  ir::Value* begin = nullptr;
  ir::Value* end = nullptr;
  bool addInit = true;
};

// The N path (B row-major): the K loop, the warps' sums in `partials`, then the block's in `sums`
// (after a barrier).
void nPathSums(sm80::Context& cx, const Geometry& geo, ir::Value* partials, ir::Value* sums, const KRange& kr = {});
// The K path (B K-major): the K loop, then the block's sums in `sums` (after a barrier).
void kPathSums(sm80::Context& cx, const Geometry& geo, ir::Value* sums, const KRange& kr = {});

// The loop step along K of one block (every thread's loads of a step): the K chunk of a slice is a
// whole number of them.
int kStep(const Geometry& geo);

}  // namespace kiln::gemv
