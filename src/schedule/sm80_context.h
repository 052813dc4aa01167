#pragma once
// Internal to the sm80_multistage strategy: what the main loop and the epilogue builders share.
#include <map>
#include <string>
#include <vector>

#include "dialects/kern/kern_ops.h"
#include "schedule/config.h"
#include "schedule/gemm_analysis.h"
#include "schedule/kern_builder.h"

namespace kiln::sm80 {

struct Context {
  const GemmProgram& g;
  const Config& cfg;
  const Target& target;
  KernBuilder& b;
  ir::DiagnosticEngine& diag;

  // Kernel parameters by name (tensor and scalar argument names, dim names).
  std::map<std::string, ir::Value*> params;
  // Per-thread and per-block indices (i32).
  ir::Value *tid = nullptr, *lane = nullptr, *warp = nullptr, *warpM = nullptr, *warpN = nullptr;
  ir::Value *m0 = nullptr, *n0 = nullptr;  // first row / column of the block's tile
  ir::Value *dimM = nullptr, *dimN = nullptr, *dimK = nullptr;

  int warpTileM() const { return cfg.warpTileM(); }
  int warpTileN() const { return cfg.warpTileN(); }
  int mTiles() const { return cfg.warpTileM() / 16; }  // m16 tiles per warp
  int nTiles() const { return cfg.warpTileN() / 8; }   // n8 tiles per warp
  // Index of accumulator element e of MMA tile (i, j) in the flat per-thread list.
  int accIndex(int i, int j, int e) const { return (i * nTiles() + j) * 4 + e; }
  int numAcc() const { return mTiles() * nTiles() * 4; }
};

// Builds the cp.async ring, the pipelined K loop and the MMAs; returns the per-thread accumulators
// (numAcc() f32 values, in accIndex order) after the loop.
std::vector<ir::Value*> buildMainloop(Context& cx);

// Lowers the program's epilogue ops on the accumulators, ending in masked stores. Returns false
// after a diagnostic for an op it cannot lower.
bool buildEpilogue(Context& cx, const std::vector<ir::Value*>& acc);

}  // namespace kiln::sm80
