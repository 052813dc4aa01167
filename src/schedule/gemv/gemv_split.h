#pragma once
// Internal to the gemv strategy: split_k=S (gemv_split.cpp, docs/gemv-strategy.md "Split-K").
#include <functional>

#include "schedule/gemv/gemv_loops.h"

namespace kiln::gemv {

struct Split {
  int splits = 1;
  ir::Value* unit = nullptr;   // i32: the block tile (n, m, batch), blockIdx.x / S
  ir::Value* split = nullptr;  // i32: the slice of its K, blockIdx.x % S
};

// From blockIdx.x: the slice and its tile (sets sp.unit, sp.split and cx.n0, cx.m0, cx.batch);
// returns the slice's K range.
KRange sliceOf(sm80::Context& cx, const Geometry& geo, Split& sp);

// After the slice's sums are in `sums` (and a barrier): stores them in the workspace; the block
// that arrives last sums every slice's in slice order (and the program's initial value) into
// `sums`, resets the tile's flag and runs `epilogue`. `votes` is a [1][1][32] f32 buffer. False
// when the epilogue failed (after its diagnostic).
bool finishSplit(sm80::Context& cx, const Geometry& geo, const Split& sp, ir::Value* sums, ir::Value* votes,
                 const std::function<bool()>& epilogue);

}  // namespace kiln::gemv
