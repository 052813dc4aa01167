#pragma once
// Internal to the GEMM strategies: what the main loop and the epilogue builders share. The
// epilogue (sm80_epilogue.cpp) is shared by sm80_multistage and sm90_ws_persistent: both hold the
// accumulators in the m16n8 C-fragment layout per warp (fragment_layout.h; wgmma's m64nN layout
// gives warp w of a warpgroup rows 16w .. 16w + 15 of each m64 block in exactly that layout).
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "dialects/kern/kern_ops.h"
#include "schedule/config.h"
#include "schedule/gemm_analysis.h"
#include "dialects/kern/kern_builder.h"

namespace kiln::sm80 {

struct Context {
  const GemmProgram& g;
  const Config& cfg;
  const Target& target;
  KernBuilder& b;
  ir::DiagnosticEngine& diag;

  // Kernel parameters by name: the program's arguments and its dims (two namespaces: a tensor and a
  // dim may share a name).
  std::map<std::string, ir::Value*> args{}, dims{};
  // Per-thread and per-block indices (i32).
  ir::Value *tid = nullptr, *lane = nullptr, *warp = nullptr, *warpM = nullptr, *warpN = nullptr;
  ir::Value *m0 = nullptr, *n0 = nullptr;  // first row / column of the block's tile
  ir::Value *dimM = nullptr, *dimN = nullptr, *dimK = nullptr;
  // When set, the rows the epilogue stores end here rather than at M (gemv: a block's rows m0 ..
  // min(M, m0 + bm), its fragment's rows past bm being another block's).
  ir::Value* rowEnd = nullptr;
  ir::Value* batch = nullptr;  // blockIdx.z when the tile loop is batched
  // gemv split_k: the runtime's workspace (kern_ops.h, "Split-K"), when the kernel takes one.
  ir::Value *wsFlags = nullptr, *wsPartials = nullptr;
  // Grouped GEMM: the block's group id, ids[m0] (i64); when B is selected by it, groupOk says the
  // id lies in [0, G) and groupB is the id to address B with (0 when it does not: the B copies are
  // then zero-filled, so no address outside B is ever formed).
  ir::Value *group = nullptr, *groupOk = nullptr, *groupB = nullptr;

  // The address of the matrix a tensor argument holds for this block: the argument itself, or, for
  // a batched [Bt, rows, cols] tensor, the slice of this block's batch, or, for a grouped B [G, K,
  // N], the slice of this block's group.
  ir::Value* matrixBase(const ir::Value* tensor);
  std::map<const ir::Value*, ir::Value*> matrixBases{};

  // The thread's warp tile. By default (sm80) the cfg's warp grid: mTiles m16 tiles stacked 16 rows
  // apart from row m0 + warpM * warpTileM, nTiles n8 tiles from column n0 + warpN * warpTileN.
  // sm90 sets the overrides: a consumer warp owns 16-row slices 64 rows apart (one per m64 block).
  int mTilesOverride = 0, nTilesOverride = 0;
  int mTileStride = 16;                             // rows between the warp's consecutive m16 tiles
  ir::Value *warpRow0 = nullptr, *warpCol0 = nullptr;  // first row / column of the warp tile, if set
  // sm90 swap_ab: the fragment holds the tile transposed, its rows along N and its columns along M
  // (warpRow0 is then a column of the output and warpCol0 a row). Stores go through storeToSmem.
  bool transposed = false;
  // When set (sm90 epilogue=tma), the output store hands each pair (m16 tile i, row half h, n8
  // tile j) here instead of storing it to global memory; the strategy stages it in shared memory.
  // A 16-bit output's pair comes packed in `packed` (hi null); an f32 output's as two f32 values.
  std::function<void(int i, int h, int j, ir::Value* packed, ir::Value* hi)> storeToSmem{};
  // When set (sm90 epilogue_loads=early), the epilogue's vector and scalar loads made ahead of it
  // by preloadEpilogue, per load op, in the order that load lowers them; the epilogue uses these
  // instead of loading again. preloadEpilogue fills it.
  std::map<const ir::Operation*, std::vector<ir::Value*>>* earlyLoads = nullptr;

  // An extent of a tensor type: its dim parameter, or a constant.
  ir::Value* extent(const ir::Extent& e) { return e.isSymbolic() ? dims.at(e.sym) : b.i32(e.value); }

  int warpTileM() const { return cfg.warpTileM(); }
  int warpTileN() const { return cfg.warpTileN(); }
  int mTiles() const { return mTilesOverride ? mTilesOverride : cfg.warpTileM() / 16; }  // m16 tiles per warp
  int nTiles() const { return nTilesOverride ? nTilesOverride : cfg.warpTileN() / 8; }    // n8 tiles per warp
  // Index of accumulator element e of MMA tile (i, j) in the flat per-thread list.
  int accIndex(int i, int j, int e) const { return (i * nTiles() + j) * 4 + e; }
  int numAcc() const { return mTiles() * nTiles() * 4; }
};

// Binds the program's arguments and dims as the kernel's parameters (body's arguments) into cx, sets
// the builder's location to the tile loop's, and makes the thread, lane and warp indices. With
// `workspace`, the split-K workspace (ws_flags, ws_partials) follows the program's tensor arguments.
void bindKernelEntry(Context& cx, ir::Block* body, bool workspace = false);

// Builds the cp.async ring, the pipelined K loop and the MMAs; returns the per-thread accumulators
// (numAcc() f32 values, in accIndex order) after the loop.
std::vector<ir::Value*> buildMainloop(Context& cx);

// Lowers the program's epilogue ops on the accumulators, ending in masked stores. Returns false
// after a diagnostic for an op it cannot lower.
bool buildEpilogue(Context& cx, const std::vector<ir::Value*>& acc);

// Makes, at the insertion point, the loads of the epilogue that one value per fragment row or
// column or per thread covers (tile.load of a [M] or [N] slice, tile.load_scalar), or with
// wholeTiles those of one value per element (a [M, N] residual), for the epilogue built later with
// the same positions (warp tile, overrides) to use. Records them in *cx.earlyLoads. False after a
// diagnostic.
bool preloadEpilogue(Context& cx, bool wholeTiles = false);

// Prefetches into L1, at the insertion point, the lines of global memory those loads (the ones
// preloadEpilogue would make) will read for the block's tile, one line per thread `slot` (an i32
// in 0 .. slots - 1), so the epilogue's own loads hit L1 (sm90 epilogue_loads=prefetch). False
// after a diagnostic.
bool prefetchEpilogue(Context& cx, ir::Value* slot, int slots);

}  // namespace kiln::sm80
