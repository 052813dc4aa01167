#pragma once
// Internal to the sm80 main loop: how one operand's K tile travels from global to shared memory.
//
// A stage row is split into 16-byte chunks dealt out to the block's threads (the same chunk of the
// same row for a thread in every K tile). What a thread does with its chunk depends on what the
// kernel may assume about the operand's rows (Config::alignA / alignB, docs/layouts.md):
//   * rows 16-byte aligned, row length a multiple of a chunk (a dense tensor under the launch
//     contract): one cp.async.cg of 16 bytes, all of it or nothing (zero-fill) -- the fast path;
//   * rows 16-byte aligned but of any length (a strided tensor, whose leading dimension is aligned
//     but whose row may end inside a chunk): one cp.async of 16 bytes copying the part inside;
//   * rows 8- or 4-byte aligned: the chunk as two or four cp.async.ca of that many bytes, each all
//     of it or nothing (dense) or the part inside (strided);
//   * rows aligned to their elements only (an odd K or N): no cp.async can address them, so the
//     thread loads the chunk's elements with predicated ld.global (zero outside the tensor) and
//     stores them to shared memory with st.shared; the main loop issues the loads where a copy
//     would be issued and the stores just before the barrier that publishes the slot, so the
//     loads' latency hides behind the iteration's MMAs.
// Positions outside the tensor are zero in shared memory, whatever the path: they contribute
// nothing to the dot product. No address outside the tensor is formed for a copy that reads.
#include <vector>

#include "schedule/sm80_context.h"

namespace kiln::sm80 {

struct CopyPlan {
  ir::Value* buf = nullptr;
  kern::SmemLayout layout;
  ir::Value* base = nullptr;           // the tensor's matrix base
  bool kAlongRows = false;             // stage rows are K (row-major B, column-major A), columns the other dim
  int64_t rowsPerPass = 0;             // stage rows covered by one pass of all threads
  std::vector<ir::Value*> offsets;     // per pass: the smem offset op to use
  std::vector<int64_t> dispRows;       // per pass: its row displacement
  std::vector<ir::Value*> ptrs;        // per pass: source pointer at K tile 0
  std::vector<ir::Value*> valid;       // per pass: the non-K coordinate is in bounds (i1)
  ir::Value* colT = nullptr;           // the thread's first column in the stage (elements)
  ir::Value* rowT = nullptr;           // the thread's first row in the stage
  ir::Value* rowStride64 = nullptr;    // elements between consecutive global rows (i64)
  // The narrower paths (see above).
  int pieceBytes = 16;                 // bytes per copy: 16, 8, 4; an element's when `regs`
  bool regs = false;                   // through registers, element by element
  bool partial = false;                // a row may end inside a piece: copy what is inside
  ir::Value* outer0 = nullptr;         // first position of the block along the non-K dim
  ir::Value* contigLen = nullptr;      // elements along the contiguous axis (the row's length)
  ir::Value* allowed = nullptr;        // a condition every copy also needs (a grouped B's id), or null
  bool wholeChunks() const { return pieceBytes == 16 && !regs && !partial; }
};

// The copy plan of one operand ring. `outer0`/`outerDim`: the block's first position and the
// extent of the non-K dim; `rowStride`: the elements between consecutive rows in global memory
// (the leading dimension); `alignBytes`: what the kernel may assume about the rows.
CopyPlan planCopies(Context& cx, ir::Value* buf, ir::Value* base, bool kAlongRows, ir::Value* outer0,
                    ir::Value* outerDim, ir::Value* rowStride, int alignBytes, bool strided, const ir::Location& loc);

// Issues the copies of K tile `kt` (i32) into `slot`. For a plan through registers, returns the
// loaded elements, which storeLoaded writes into the slot later.
std::vector<ir::Value*> copyTile(Context& cx, const CopyPlan& p, ir::Value* kt, ir::Value* slot);
void storeLoaded(Context& cx, const CopyPlan& p, ir::Value* slot, const std::vector<ir::Value*>& loaded);

}  // namespace kiln::sm80
