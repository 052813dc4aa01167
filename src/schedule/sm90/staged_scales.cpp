// Per-row scale_a copied with the stage (sharedRowScales; slice_scales.cpp): where each stage's
// copy starts and where the step's scales lie in it.
//
// scale_a is stored [K blocks][M] (M contiguous, torch's layout). A 2-D map of it would step rows
// of M floats, and TMA asks a map's row stride to be a multiple of 16 bytes: M % 4 at launch, where
// tokens come in any number. So the map is flat (the stored elements as one row) and each stage's
// copy is one box of bm + 4 floats from the tile's first element of the step's K block,
// e = kb * M + m0, rounded down to a multiple of 4: a box whose first element is not 16-byte
// aligned is an illegal instruction on the GPU (GPU run 12). The tile's scales then start e % 4
// floats into the box. The ring's rows are bm + 32 floats, so each stage's starts 128-byte
// aligned, as TMA writes shared memory.
//
// Elements past the tile's last row are the next K block's (or TMA's zeros past the tensor): the
// rows past M they scale have sums that are zero (A's rows zero-filled) and are never stored.
// (scale_b's per-column rows keep a 2-D map: slice_scales.cpp says why.)
#include "schedule/sm90/lowering.h"

namespace kiln::sm90 {
using namespace ir;

int64_t stagedScaleBoxFloats(int64_t n) { return n + 4; }

int64_t stagedScaleRowFloats(int64_t n) { return n + 32; }

Value* stagedScaleRows(KernBuilder& b, const Kernel& k, const Operation& load, const Value* coord) {
  const Type& t = load.operand(0)->type();
  for (unsigned i = 1; i < load.numOperands(); ++i)
    if (load.operand(i) == coord) {
      const Extent& e = t.shape()[i - 1];
      return e.isSymbolic() ? k.params.dims.at(e.sym) : b.i32(e.value);
    }
  KILN_ASSERT(false, "sm90: a staged scale is read at the tile's row or column");
  return nullptr;
}

Value* stagedScaleElement(KernBuilder& b, Value* kb, Value* rows, Value* first) {
  return b.add(b.mul(kb, rows), first);
}

}  // namespace kiln::sm90
