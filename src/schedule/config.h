#pragma once
// The schedule layer's side of Config: each strategy's validation rules and the sm90 strategy's
// derived shapes. The Config itself, its parsing and its option tables' public view are
// kiln/config.h.
#include <cstdint>
#include <string>
#include <vector>

#include "kiln/config.h"

namespace kiln {

// The sm80_multistage rules (config.cpp); validate() dispatches to it.
bool validateSm80Multistage(const Config& c, const Target& t, const OperandInfo& ops, ir::DiagnosticEngine& diag,
                            const ir::Location& loc);
// The rowwise rules (rowwise/rowwise_config.cpp); validate() dispatches to it. `elemBytes` is the
// narrowest element of the row tensors (OperandInfo::aElemBytes).
bool validateRowwise(const Config& c, const Target& t, const OperandInfo& ops, ir::DiagnosticEngine& diag,
                     const ir::Location& loc);
// The gemv rules (gemv/gemv_config.cpp); validate() dispatches to it.
bool validateGemv(const Config& c, const Target& t, const OperandInfo& ops, ir::DiagnosticEngine& diag,
                  const ir::Location& loc);
// The sm90_ws_persistent rules (sm90/config.cpp); validate() dispatches to it.
bool validateSm90WsPersistent(const Config& c, const Target& t, const OperandInfo& ops, ir::DiagnosticEngine& diag,
                              const ir::Location& loc);
// sm90_ws_persistent's shape of a config: warps_m consumer warpgroups (1 to 3) after one producer
// warpgroup (consumers=pingpong: two, each owning whole bm x bn tiles in turn); the register split
// between them (40 / 232 with two consumer warpgroups, 40 / 152 with three, none with one: the
// consumers' accumulators take what the register file has); shared memory of the ring and barriers.
struct Sm90Shape {
  int consumerWarpgroups = 1;
  int threads = 256;
  int regsProducer = 0, regsConsumer = 0;  // 0: no setmaxnreg
  int maxRegsAtEntry = 0;                  // 0: not stated
  int64_t smemBytes = 0;
  // A ring stage: bm rows of A and bStageRows of B, bk elements each. B's rows are bn rounded up
  // to whole 64-column boxes (a row-major B is copied in 64-column boxes; with bn not a multiple
  // of 64 the last box's columns past bn are copied and left unread; a K-major B copies bn rows).
  int bStageRows = 0;
  int64_t stageBytes = 0;
  // epilogue=tma: the output staging buffer. Each consumer warpgroup stages its rows 64 columns
  // (one TMA box) at a time in cSlots slots, so one box's store can be in flight while the next
  // is written: rows x 64 x cSlots per warpgroup, whatever bn is. The columns past the last whole
  // box (bn not a multiple of 64) are stored directly from registers.
  int64_t cOffset = 0, cBytes = 0;
  int cSlots = 0;
  // reuse_stage: the boxes per warpgroup beyond cSlots, staged in the B part of the ring stage
  // the tile's K loop read last (warpgroup w's from row w * bn / warps_m of that stage).
  int ringBoxes = 0;
  int64_t barrierOffset = 0;
};
// elemBytes: A's and B's element size (2, or 1 for FP8); the staged output is 16-bit.
Sm90Shape sm90Shape(const Config& c, int elemBytes, int cElemBytes = 2);

// l2_hint=reuse in sm90_ws_persistent: when an operand streams (is loaded L2 evict_first). It
// streams when no other cluster reads its tiles (A: N <= bn * cluster_n; B: M <= bm * cluster_m)
// and each K step's copies of it by one cluster cover whole L2 fills: the extent along the
// operand's contiguous dim and that dim's length are multiples of the fill. The fill is 128 bytes
// (the streamed operand's TMA map promotes L2 fills to 128-byte lines, not 256): a fill larger
// than what its reader asked for brings in bytes another read (the next K step, the neighbouring
// tile) wants later, and evict_first drops them before that read, so they come from DRAM twice
// (docs/history/2026-11-29.md, "l2_hint=reuse, first rule"); 128-byte fills stream more operands than
// 256-byte ones and measured 11-14% faster where only they stream (docs/history/2026-11-30.md,
// "128-byte fills"). So A streams at K a multiple of 64 elements, row-major B at bn * cluster_n
// and N multiples of 64. For
// row-major B the extent is the cluster's bn * cluster_n columns, whose blocks copy a K step's rows
// within a ring's depth of each other because every stage waits for all of their A pieces. The
// producer emits the same conditions as kern IR, evaluated per launch (sm90/producer.cpp), and the
// kernel states them for the runtime, which sets the map's L2 promotion to the fill while the
// operand streams (KernelParam::stream).
struct Sm90StreamRule {
  bool possible = false;    // false: never streams under this config
  char boundDim = 0;        // 'N' (A) or 'M' (B): streams only when this dim <= bound
  int64_t bound = 0;
  char rowDim = 0;          // 'K' or 'N': the operand's contiguous dim, whose length must be a
  int64_t rowMultiple = 1;  // multiple of rowMultiple elements (rows start on fills)
  int fillBytes = 256;      // the map's L2 promotion while the operand streams (0: none)
  bool holds(int64_t m, int64_t n, int64_t k) const {
    if (!possible) return false;
    int64_t b = boundDim == 'N' ? n : m, row = rowDim == 'K' ? k : n;
    return b <= bound && row % rowMultiple == 0;
  }
};
struct Sm90StreamRules {
  Sm90StreamRule a, b;
};
Sm90StreamRules sm90StreamRules(const Config& c, bool bKMajor, int aElemBytes, int bElemBytes);
struct Sm90Streams {
  bool a = false, b = false;
};
// The rules evaluated for a launch of M x N x K.
Sm90Streams sm90Streams(const Config& c, int64_t m, int64_t n, int64_t k, bool bKMajor, int aElemBytes,
                        int bElemBytes);

}  // namespace kiln
