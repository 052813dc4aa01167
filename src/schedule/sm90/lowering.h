#pragma once
// Internal to the sm90_ws_persistent lowering (lower.cpp): the values its builders share, each
// built once and read-only after, and the builders of the kernel's parts.
//
//   Request   what was asked: the analyzed program, its options, the target, their Geometry;
//   Kernel    the kernel-wide IR values: parameters, shared-memory buffers and barriers, K steps
//             (kernel.cpp builds them before the tile loop);
//   Unit      the tile loop body's values: which unit of work (tile, K slice or run of K steps)
//             and the ring position its K loop starts at (lower.cpp, at the top of the body).
//
// Each builder takes the ones it reads, with the KernBuilder that writes (its insertion point is
// where the part goes) and, where it can refuse the program, the diagnostics.
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "dialects/kern/kern_builder.h"
#include "schedule/config.h"
#include "schedule/gemm_analysis.h"
#include "schedule/sm90/geometry.h"

namespace kiln::sm90 {

struct Request {
  const GemmProgram& g;
  const Config& c;
  const Target& target;
  const Geometry& geo;

  bool batched() const { return !g.dimBatch.empty(); }
  // Whether A and B are batched too (groups along K batch only the output, by the group).
  bool operandsBatched() const { return batched() && !g.raggedK; }
  int elemBytes() const { return ir::bitWidth(g.abType) / 8; }  // A's (and B's but FP8 e4m3 x e5m2)
};

// The kernel's parameters: the program's tensors and scalars (args) and dims by name (two
// namespaces: a tensor and a dim may share a name), and those the strategy adds.
struct Params {
  std::map<std::string, ir::Value*> args, dims;
  ir::Value *tmA = nullptr, *tmB = nullptr;  // the operands' tensor maps
  ir::Value* tmC = nullptr;                  // epilogue=tma: the output's
  ir::Value* tmSB = nullptr;                 // scale_b copied with the stage (sharedColumnScales, sharedBlockScales)
  ir::Value* tmSA = nullptr;                 // per-row scale_a copied with the stage (sharedRowScales)
  // split_k, stream_k: the runtime's workspace (flags, partial sums).
  ir::Value *wsFlags = nullptr, *wsPartials = nullptr;
  ir::Value *dimM = nullptr, *dimN = nullptr, *dimK = nullptr;
};

// Shared memory: the operand rings and their mbarrier rings, the output staging.
struct Buffers {
  ir::Value *sA = nullptr, *sB = nullptr;      // [stages, rows, 64] 128B-swizzled
  ir::Value *full = nullptr, *empty = nullptr;  // one mbarrier per stage each
  ir::Value* turn = nullptr;  // consumers=pingpong: turn[wg] completes when wg may start its K loop
  ir::Value* sC = nullptr;    // epilogue=tma: per consumer warpgroup, cSlots boxes of its rows x 64
  // reuse_stage: a view of the B ring, [stages * warps_m, bn / warps_m, 64]: slot s * warps_m + wg
  // holds warpgroup wg's boxes past the slots in ring stage s.
  ir::Value* sR = nullptr;
  // sharedColumnScales: per stage, scale_b's bn floats of the step's K block for the tile's
  // columns ([stages, 1, bn] f32, unswizzled), copied by TMA with A and B; sharedBlockScales:
  // per stage one 16-byte box per scale_b block of the tile, each on its own 128-byte row
  // group ([stages, 8 boxes, 4] f32: the box's first element is the block's scale).
  ir::Value* sSB = nullptr;
  // sharedRowScales: per stage, scale_a's bm floats of the step's K block for the tile's rows, up
  // to 3 floats into a row of bm + 32 ([stages, 1, bm + 32] f32, unswizzled; staged_scales.cpp),
  // after sSB's ring.
  ir::Value* sSA = nullptr;
};

struct Kernel {
  Params params;
  Buffers smem;
  ir::Value* tid = nullptr;     // kern.thread_id
  ir::Value* rank = nullptr;    // in a cluster: the block's rank (kern.cluster_rank)
  ir::Value* ktiles = nullptr;  // ceil(K / bk): a tile's K steps
  ir::Value* ksteps = nullptr;  // a unit's K steps: ktiles, or split_k's ceil(ktiles / S)
};

// Per unit (the tile loop's body): its tile's origin and batch; split_k's (tile, split) and
// stream_k's peers; its K steps from kbase (null: from 0); and the ring position its K loop starts
// at. Both roles derive the position from the unit's ordinal, so they agree without talking.
struct Unit {
  ir::Value *iter = nullptr, *m0 = nullptr, *n0 = nullptr, *batch = nullptr;
  // Ragged groups (kern.tile_loop {ragged}): with offsets the group's matrix of B, and the end of
  // the group's rows (stores stop there).
  ir::Value *group = nullptr, *mEnd = nullptr;
  // Groups along K (kern.tile_loop {ragged = "k_offsets"}, ragged_walk.cpp): the group's first token (the K coordinate of its
  // first step) and its end; the unit's K steps are ceil((kEnd - kTok) / bk) from kTok.
  ir::Value *kTok = nullptr, *kEnd = nullptr;
  ir::Value *tile = nullptr, *split = nullptr;  // split_k
  ir::Value* peers = nullptr;                   // stream_k: the blocks whose sums this unit adds
  ir::Value *kbase = nullptr, *ksteps = nullptr;
  ir::Value *stage0 = nullptr, *phase0 = nullptr;
};

// Where a consumer warpgroup stands: its lane, its warp among the consumer warps, its index, and
// where its operands start in a stage: its first row of A (its share of the tile's rows), its
// first column of the tile and its first B stage row (with warps_n: its columns').
struct Warpgroup {
  ir::Value *lane = nullptr, *cwarp = nullptr, *wg = nullptr;
  ir::Value *rowA = nullptr, *colB = nullptr, *rowB = nullptr;
};

// ragged_walk.cpp: whether the config can walk the program's ragged groups (a diagnostic if not),
// and the tile loop that walks them (kern.tile_loop {ragged}; groups along K: {ragged =
// "k_offsets"}), its body empty.
bool checkRagged(const GemmProgram& g, const Config& c, ir::DiagnosticEngine& diag);
ir::Operation* createRaggedTileLoop(KernBuilder& b, const Request& r, const Kernel& k);
// In the unit's K step kt on stage s, before its wgmmas: when the step holds fewer than bk of the
// group's tokens, the stage's lines past them (the next group's tokens, or TMA's zeros) are zeroed
// by the consumer threads that read the stage.
void zeroTokenTail(KernBuilder& b, const Request& r, const Kernel& k, const Unit& u, const Warpgroup& w, ir::Value* kt,
                   ir::Value* s);

// kernel.cpp: the kernel op with its parameters, launch contract and attributes, an empty body.
struct KernelOp {
  std::unique_ptr<ir::Operation> op;
  Params params;
};
std::optional<KernelOp> createKernel(const ir::Operation& program, const Request& r, ir::DiagnosticEngine& diag);
// The shared memory, the barriers' initialization and the cluster barrier, at the kernel's top.
Kernel buildKernelValues(KernBuilder& b, const Request& r, Params params);

// (stage, phase) after one more step of a ring of `stages`: the phase flips when the stage wraps.
std::pair<ir::Value*, ir::Value*> nextStage(KernBuilder& b, ir::Value* stage, ir::Value* phase, int stages);

// producer.cpp: the copies of K step kt into stage s of phase ph, at the insertion point, for the
// one thread that issues them: the L2 stream predicates and the tile's group (loop-invariant), the
// wait for a free stage, its full barrier armed with the stage's bytes, the TMA copies of A and B.
void buildCopies(KernBuilder& b, const Request& r, const Kernel& k, const Unit& u, ir::Value* kt, ir::Value* s,
                 ir::Value* ph);
// consumer.cpp: the unit's one role (sm90-warp-specialize makes a producer role of its copies): per
// K step one thread copies the stage, every consumer warp waits for it, runs the wgmma of the K
// step and keeps one wgmma group in flight while releasing the previous stage; then the fused
// epilogue. False after a diagnostic from the epilogue.
bool buildConsumer(KernBuilder& b, const Request& r, const Kernel& k, const Unit& u, ir::DiagnosticEngine& diag);

// Inside the consumer role (consumer.cpp, k_loop.cpp, epilogue.cpp, split_handover.cpp):
// the named barrier of consumer warpgroup wg's 128 threads (0 is kern.barrier's);
ir::Value* groupBarrier(KernBuilder& b, ir::Value* wg);
// whether this thread is its warpgroup's first, the one that issues and waits for TMA stores;
ir::Value* isElected(KernBuilder& b);
// gives stage s back to the producers: to this block's, and in a cluster to every peer's too, whose
// multicast also overwrites this block's copy of the stage (after the warp's wgmma_wait retired the
// groups that read it);
void releaseStage(KernBuilder& b, const Request& r, const Kernel& k, ir::Value* s);
// the unit's K loop (k_loop.cpp): per K step the copies by the thread `copier`, the wait for its
// stage, its wgmmas into the carried
// accumulators from acc0 (firstIgnoresAcc: the first step's scale_d is kt != 0) and their commit,
// one group kept in flight while the previous stage goes back (reuse_stage: and in the first step
// the previous tile's last stage, prevLast, once the elected thread saw its stores read it). The
// accumulators after it and the stage of its last step;
// tile.dot_scaled (slice_scales.cpp): whether the config can apply the program's block scales (false
// after a diagnostic); the thread's scale elements for K block 0 (pointers, bounds), made before
// the K loop; and, in it, the factor of each accumulator for the unit's K step `kstep` (bk =
// block_k: one slice per step), loaded and multiplied at the insertion point, for
// kern.promote_scales;
bool checkSliceScales(const GemmProgram& g, const Config& c, ir::DiagnosticEngine& diag);
struct SliceScales {
  struct Load {
    ir::Value *ptr = nullptr, *ok = nullptr;  // K block 0's element, and whether the row or column is in
    ir::Value* kStride = nullptr;             // the elements from one stored K index to the next (i64)
    int64_t kPerStep = 1;                     // K steps one stored K index covers
    // Per-column scales (a block of one column): the column axis's element stride (i64) and the
    // columns left in the tensor from this one. A load `base` >= 0 is column `delta` past load
    // base's, addressed from it in the step (a constant offset) and in the tensor where delta < its
    // columns left: no pointer of its own lives through the loop.
    ir::Value *colStride = nullptr, *colLeft = nullptr;
    int base = -1;
    int64_t delta = 0;
    // Column pairs (pairedColumnScales): `pair` loads this column and the next in one 8-byte load;
    // a load with `secondOf` >= 0 is that next column, the second value of load secondOf.
    bool pair = false;
    int secondOf = -1;
    // sharedColumnScales: the column `col` past the thread's first of the stage's scale_b row,
    // read with kern.ld_shared at the step's stage (no pointer, no predicate: TMA zero-filled the
    // columns past N).
    bool stage = false;
    int64_t col = 0;
    bool rowOfA = false;  // sharedRowScales: the row `col` past the thread's first of scale_a's stage row
    int64_t row = 0;      // sharedBlockScales: the stage row of the scale_b block's box (8 per box)
    // sharedBlockScales: the block's first stored element (block * ktiles, i32); the step's scale is
    // element (blockAt + kstep) % 4 of its box (producer.cpp starts each box 16-byte aligned).
    ir::Value* blockAt = nullptr;
  };
  std::vector<Load> loads;                     // scale_a's (per row), then scale_b's (per column block)
  std::vector<std::pair<int, int>> factorOf;   // per accumulator: its scale_a load and scale_b load
  // Where the warpgroup's columns may span two scale_b blocks (bn neither a multiple nor a divisor
  // of the block: 160 or 96 for 128): factorOf's scale_b is the first block's, `second` the next
  // block's load, and per accumulator `group` the first column c of its chunk (the columns between
  // two places a block may start, g = 32 for 160 and 128): the chunk is in the second block where
  // c >= `rel`, the columns from the warpgroup's first to the next block's start (a multiple of g).
  // So a step makes one product per row and block, and selects one of two per row and chunk.
  int second = -1;
  ir::Value* rel = nullptr;
  std::vector<int> group;
  ir::Value* stageOff = nullptr;  // sharedColumnScales: kern.smem_offset of the thread's first column
  // sharedRowScales: the thread's first row in the tile, the tensor's rows M and the tile's first,
  // from which each step finds where its copy put the tile's scales (staged_scales.cpp).
  ir::Value *stageRowA = nullptr, *rowsA = nullptr, *firstA = nullptr;
};
// Whether the program's per-column scale_b (blocks of one column, [ceil(K/128)][N] dense, N
// contiguous) is copied into the stage by the producer and read with kern.ld_shared: not for
// batched, grouped or ragged operands (their scale rows are not one 2-D map's), nor where the ring
// would pass the target's shared memory; those keep the loads in registers.
bool sharedColumnScales(const Request& r);
// Whether the program's per-row scale_a (blocks of one row along M and bk along K, [ceil(K/128)][M]
// dense, M contiguous) is copied into the stage the same way (a [stages, 1, bm] ring after scale_b's)
// and read with kern.ld_shared: not for batched, grouped or ragged operands, nor where the rings
// would pass the target's shared memory.
bool sharedRowScales(const Request& r);
// Per-row scale_a copied with the stage (staged_scales.cpp): each copy is a box of bm + 4 floats
// of a flat map of the stored [K blocks][M], starting at the tile's first element of the K block,
// e = kb * M + m0 (stagedScaleElement), rounded down to a multiple of 4; the tile's scales start
// e % 4 floats into a ring row of bm + 32 floats.
int64_t stagedScaleBoxFloats(int64_t n);
int64_t stagedScaleRowFloats(int64_t n);
// The rows (M or N) of the scale tensor `load` reads along the axis `coord` selects.
ir::Value* stagedScaleRows(KernBuilder& b, const Kernel& k, const ir::Operation& load, const ir::Value* coord);
ir::Value* stagedScaleElement(KernBuilder& b, ir::Value* kb, ir::Value* rows, ir::Value* first);
// Whether the program's 128x128-block scale_b (blocks of bk along K and bN >= 8 along N, stored
// [N blocks][K blocks] dense) is copied into the stage the same way: per stage, one 16-byte box
// of a flat tensor map (tmap {flat}) per block the tile's columns span, starting at the block's
// element of the step's K block, in 128-byte rows of a [stages, 8 boxes, 4] ring; read with
// kern.ld_shared. Not for batched, grouped or ragged operands, warps_n > 1, nor where the ring
// would pass the shared memory.
bool sharedBlockScales(const Request& r);
// The scale_b blocks a tile's columns span (1 or 2 where sharedBlockScales applies; 0: more).
int blockScaleBoxes(const Request& r);
int64_t rowScaleRingOffset(const Request& r);
// The ring's offset in shared memory (after the kernel's other buffers and barriers, 128-byte
// aligned) and the kernel's shared memory with it.
int64_t scaleRingOffset(const Request& r);
int64_t scaleRingEnd(const Request& r);
// The distinct scale elements a thread loads per K step (its rows' and column blocks').
int sliceScaleLoads(const Request& r);
// Whether per-column scale_b elements are loaded in pairs (scale_b in blocks of one column, dense
// with its columns contiguous): the launch then needs scale_b 8-byte aligned and its column
// extent even (kernel.cpp), which puts every pair a thread loads on 8 bytes.
bool pairedColumnScales(const Request& r);
SliceScales prepareSliceScales(KernBuilder& b, const Request& r, const Kernel& k, const Unit& u, const Warpgroup& w);
// The factors of K step `kstep`; `kLimit` (split_k: the K steps of K), its global loads predicated
// off from there.
std::vector<ir::Value*> buildSliceScales(KernBuilder& b, const SliceScales& s, ir::Value* kstep, const Kernel& k,
                                         ir::Value* stage, ir::Value* kLimit = nullptr);
struct KLoop {
  std::vector<ir::Value*> acc;
  ir::Value* last = nullptr;
};
KLoop buildKLoop(KernBuilder& b, const Request& r, const Kernel& k, const Unit& u, const Warpgroup& w,
                 ir::Value* copier, ir::Value* isLane0, const std::vector<ir::Value*>& acc0, bool firstIgnoresAcc,
                 ir::Value* elected, ir::Value* prevLast);
// split_k / stream_k (split_handover.cpp): after the unit's K loop, with its sums `out`: a unit that
// does not finish its tile hands them over; the one that does adds its peers' and calls `epilogue`
// on the totals. False if that did;
bool buildSplitEpilogue(KernBuilder& b, const Request& r, const Kernel& k, const Unit& u, ir::Value* wg,
                        const std::vector<ir::Value*>& out,
                        const std::function<bool(const std::vector<ir::Value*>&)>& epilogue);
// epilogue_loads=early: the loads that preloadEpilogue made, per unit of the epilogue (the whole
// warpgroup tile for epilogue=direct; for epilogue=tma each box or box piece, then the columns
// past the last whole box), each a map from load op to its values.
using EarlyLoads = std::vector<std::map<const ir::Operation*, std::vector<ir::Value*>>>;
// epilogue.cpp: the fused epilogue of one tile's accumulators `out` for the warpgroup; reuse_stage:
// ringStage is the ring stage the tile's K loop read last, which holds the boxes past the staging
// slots; epilogue_loads=early: `early` holds the loads preloadEpilogue made with the same
// arguments. False after a diagnostic for an epilogue op it cannot lower.
struct EpilogueInputs {
  const std::vector<ir::Value*>& out;
  ir::Value* ringStage = nullptr;
  EarlyLoads* early = nullptr;
};
bool buildEpilogue(KernBuilder& b, const Request& r, const Kernel& k, const Unit& u, const Warpgroup& w,
                   const EpilogueInputs& in, ir::DiagnosticEngine& diag);
// and the epilogue's loads of vectors and scalars (sm80::preloadEpilogue) at the insertion point,
// for buildEpilogue to use (epilogue_loads=early). False after a diagnostic.
bool preloadEpilogue(KernBuilder& b, const Request& r, const Kernel& k, const Unit& u, const Warpgroup& w,
                     EarlyLoads& early, ir::DiagnosticEngine& diag);
// epilogue_loads=prefetch: the lines of global memory the epilogue's vector and scalar loads will
// read for the tile (sm80::prefetchEpilogue), prefetched into L1 at the insertion point by the
// warpgroup's 128 threads. False after a diagnostic.
bool prefetchEpilogue(KernBuilder& b, const Request& r, const Kernel& k, const Unit& u, const Warpgroup& w,
                      ir::DiagnosticEngine& diag);

}  // namespace kiln::sm90
