// Config rules of the sm90_ws_persistent strategy (contract in schedule/config.h): the shape a
// config gives the kernel, the operands' L2 streaming rules, and what the strategy accepts.
#include <algorithm>

#include "schedule/config.h"
#include "schedule/sm90/geometry.h"

namespace kiln {

Sm90Shape sm90Shape(const Config& c, int elemBytes, int cElemBytes) {
  Sm90Shape s;
  // Consumer warpgroups: warps_m along the tile's rows times warps_n along its columns (swap_ab).
  const int groups = c.warpsM * c.warpsN;
  s.consumerWarpgroups = groups;
  s.threads = 128 * (1 + groups);
  if (groups == 2) {
    // Two consumer warpgroups of up to 128 f32 accumulators each: 232 registers for them, 40 for
    // the TMA warpgroup (128 * 40 + 256 * 232 = 64512 of the 65536).
    s.regsProducer = 40;
    s.regsConsumer = 232;
  } else if (groups == 3) {
    // Three consumer warpgroups (192-row tiles, 64 rows each): 152 registers for them, 40 for the
    // TMA warpgroup (128 * 40 + 384 * 152 = 63488 of the 65536); a 64 x 192 share is 96 f32
    // accumulators per thread.
    s.regsProducer = 40;
    s.regsConsumer = 152;
  }
  // setmaxnreg needs the register count at entry; the CTA's share of the register file, rounded
  // down to a multiple of 8 (384 threads: 168).
  if (s.regsProducer || s.regsConsumer) s.maxRegsAtEntry = std::min(255, (65536 / s.threads) / 8 * 8);
  // blocks_per_sm=2: two blocks' threads share the register file (256 threads each: 128 a thread).
  if (c.blocksPerSm == 2) s.maxRegsAtEntry = std::min(255, (65536 / (2 * s.threads)) / 8 * 8);
  s.bStageRows = (c.bn + 63) / 64 * 64;
  s.stageBytes = int64_t(c.bm + s.bStageRows) * c.bk * elemBytes;
  s.cOffset = c.stages * s.stageBytes;
  // epilogue=tma stages each consumer warpgroup's rows (a share of the CTA's tile when the
  // warpgroups cooperate, a whole tile each when they take turns), one box (a 128-byte row's
  // columns) of its columns (all of the tile's, or with warps_n its share) per slot.
  if (c.epilogue == EpilogueStore::Tma) {
    const sm90::Geometry geo = sm90::geometryOf(c, cElemBytes);
    // store_pieces: a slot holds one row piece of a box.
    int pieces = std::max(1, c.storePieces);
    int rowsStaged = groups * geo.rowsPerConsumer / pieces;
    s.cSlots = geo.cSlots;
    // A slot is one 128-byte swizzled row per staged row: 64 columns of a 16-bit output, 32 of an
    // f32 one (sm90/kernel.cpp), whatever A and B are. An f32 tile has twice the boxes, not
    // bigger ones: the slots cost the same bytes and take turns twice as often.
    s.cBytes = int64_t(rowsStaged) * 128 * s.cSlots;
    s.ringBoxes = geo.ringBoxes;
  }
  s.barrierOffset = s.cOffset + s.cBytes;
  // Full and empty barriers, 8 bytes each per stage; with ping-pong two more that pass the turn
  // between the consumer warpgroups.
  s.smemBytes = s.barrierOffset + 16 * int64_t(c.stages) + (c.consumers == Consumers::Pingpong ? 16 : 0);
  return s;
}

Sm90StreamRules sm90StreamRules(const Config& c, bool bKMajor, int aElemBytes, int bElemBytes) {
  Sm90StreamRules r;
  if (c.l2Hint != L2Hint::Reuse) return r;
  const int fill = 128;  // the streamed map's L2 fill (config.h, Sm90StreamRule)
  // tileWidth: the elements of the contiguous dim one K step's copies cover.
  auto rule = [&](char boundDim, int64_t bound, char rowDim, int64_t tileWidth, int elemBytes) {
    Sm90StreamRule s;
    s.possible = tileWidth * elemBytes % fill == 0;
    s.boundDim = boundDim;
    s.bound = bound;
    s.rowDim = rowDim;
    s.rowMultiple = fill / elemBytes;
    s.fillBytes = fill;
    return s;
  };
  r.a = rule('N', int64_t(c.bn) * c.clusterN, 'K', c.bk, aElemBytes);
  r.b = bKMajor ? rule('M', int64_t(c.bm) * c.clusterM, 'K', c.bk, bElemBytes)
                : rule('M', int64_t(c.bm) * c.clusterM, 'N', int64_t(c.bn) * c.clusterN, bElemBytes);
  return r;
}

Sm90Streams sm90Streams(const Config& c, int64_t m, int64_t n, int64_t k, bool bKMajor, int aElemBytes,
                        int bElemBytes) {
  Sm90StreamRules r = sm90StreamRules(c, bKMajor, aElemBytes, bElemBytes);
  return {r.a.holds(m, n, k), r.b.holds(m, n, k)};
}

namespace {

const char* kWho = "sm90_ws_persistent";

// One K step is one 128-byte swizzled row of each operand: 64 16-bit or 128 FP8 elements;
// fp8_accum=promote / promote_pairs sums FP8 wgmma in registers.
void operandRules(const Config& c, const OperandInfo& ops, ir::DiagnosticEngine& diag, const ir::Location& loc) {
  if (ops.aElemBytes != ops.bElemBytes || (ops.aElemBytes != 2 && ops.aElemBytes != 1))
    diag.error(loc) << kWho << " multiplies 16-bit operands (bf16 or f16) or FP8 operands (f8e4m3, f8e5m2)";
  else if (c.bk * ops.aElemBytes != 128)
    diag.error(loc) << "bk=" << c.bk << " is not supported by " << kWho << ": use bk=" << 128 / ops.aElemBytes
                    << " (one 128-byte swizzled row of " << (ops.aElemBytes == 2 ? "16-bit" : "FP8")
                    << " elements per TMA box row)";
  const bool promote = c.fp8Accum != Fp8Accum::Fast;
  const char* accumName = fp8AccumName(c.fp8Accum);
  if (promote && ops.aElemBytes != 1)
    diag.error(loc) << "fp8_accum=" << accumName << " sums FP8 wgmma in registers; this program's operands are "
                    << "16-bit, whose wgmma sums in f32 already: leave fp8_accum=fast";
  if (promote && c.reuseStage)
    diag.error(loc) << "fp8_accum=" << accumName << " with reuse_stage=true is not supported by " << kWho
                    << " (each K step gives its stage back once its sums are added)";
}

// swap_ab (docs/sm90-strategy.md, "Swapped operands"): a warpgroup's rows of the tile are wgmma's
// N (a multiple of 8 up to 256), its columns (all of the tile's, or with warps_n a share) its m64
// blocks, staged transposed by stmatrix .trans for the TMA store.
void swappedTileRules(const Config& c, ir::DiagnosticEngine& diag, const ir::Location& loc) {
  const bool pingpong = c.consumers == Consumers::Pingpong;
  if (c.warpsN > 1 && c.warpsM * c.warpsN <= 3 && c.bn % (64 * c.warpsN) != 0)
    diag.error(loc) << "bn=" << c.bn << " does not split into warps_n=" << c.warpsN
                    << " consumer warpgroups of whole m64 wgmma blocks: use a multiple of " << 64 * c.warpsN;
  int rows = pingpong ? c.bm : c.warpsM >= 1 ? c.bm / c.warpsM : 0;
  if (c.warpsM >= 1 && (c.bm % c.warpsM != 0 || rows % 8 != 0 || rows < 8 || rows > 256))
    diag.error(loc) << "bm=" << c.bm << " with swap_ab=true gives each of " << (pingpong ? 1 : c.warpsM)
                    << " consumer warpgroup(s) " << (pingpong ? "the whole tile" : "an equal share of its rows")
                    << ", which must be a multiple of 8 from 8 to 256 rows (wgmma's N)";
  else if (c.bm / c.clusterN > 256)
    diag.error(loc) << "bm=" << c.bm << " is more rows than a TMA box of A holds (256"
                    << (c.clusterN > 1 ? " per cluster_n piece" : "") << ")";
  if (c.bn % 64 != 0 || c.bn < 64 || c.bn > 256)
    diag.error(loc) << "bn=" << c.bn << " with swap_ab=true is not whole m64 wgmma blocks: use 64, 128, 192 or 256";
  if (c.epilogue != EpilogueStore::Tma || c.stageStore != StageStore::Stmatrix)
    diag.error(loc) << "swap_ab=true holds the tile transposed in registers and stages it through stmatrix .trans: "
                       "add epilogue=tma stage_store=stmatrix";
  if (c.reuseStage) diag.error(loc) << "reuse_stage=true with swap_ab=true is not supported by " << kWho;
  if (c.clusterN > 1 && c.bm % (8 * c.clusterN) != 0)
    diag.error(loc) << "bm=" << c.bm << " does not split into cluster_n=" << c.clusterN
                    << " pieces of A on the 128-byte swizzle's 8-row period: use a multiple of " << 8 * c.clusterN;
}

// The consumer warpgroups and the tile they share: warps_m x warps_n of them (or two taking turns),
// each of whole m64 wgmma blocks, and a ring of at least two stages.
void tileRules(const Config& c, ir::DiagnosticEngine& diag, const ir::Location& loc) {
  if (c.warpsM < 1 || c.warpsN < 1 || c.warpsM * c.warpsN > 3)
    diag.error(loc) << "warps_m=" << c.warpsM << " warps_n=" << c.warpsN << " is not supported by " << kWho
                    << ": they count consumer warpgroups along the tile's rows and columns, 1 to 3 in all";
  const bool pingpong = c.consumers == Consumers::Pingpong;
  if (pingpong && (c.warpsM != 2 || c.warpsN != 1))
    diag.error(loc) << "consumers=pingpong alternates tiles between two consumer warpgroups: use warps_m=2 warps_n=1";
  if (c.warpsN > 1 && !c.swapAB)
    diag.error(loc) << "warps_n=" << c.warpsN << " splits the tile's columns between consumer warpgroups in m64 "
                    << "wgmma blocks, which are columns only with swapped operands: add swap_ab=true or use warps_n=1";
  if (c.swapAB) {
    swappedTileRules(c, diag, loc);
  } else {
    if (pingpong && (c.bm % 64 != 0 || c.bm > 128))
      diag.error(loc) << "bm=" << c.bm << " is not a tile one consumer warpgroup can own with consumers=pingpong"
                      << ": use 64 or 128 rows (m64 wgmma blocks)";
    if (!pingpong && c.warpsM >= 1 && (c.bm % (64 * c.warpsM) != 0 || c.bm / c.warpsM > 128))
      diag.error(loc) << "bm=" << c.bm << " does not split into warps_m=" << c.warpsM
                      << " consumer warpgroups of 64 or 128 rows (m64 wgmma blocks)";
  }
  if (c.bn % 16 != 0 || c.bn < 16 || c.bn > 256)
    diag.error(loc) << "bn=" << c.bn << " is not supported by " << kWho
                    << ": use a multiple of 16 up to 256 (wgmma N <= 256, in the 16 x 16 blocks of the epilogue)";
  if (c.epilogue == EpilogueStore::Tma && c.bn < 64)
    diag.error(loc) << "epilogue=tma stores 64-column boxes, and bn=" << c.bn << " has none: use epilogue=direct";
  if (c.stages < 2) diag.error(loc) << "stages=" << c.stages << " is too few: " << kWho << " needs at least 2";
}

// A consumer thread holds rows x bn / 128 f32 accumulators; 56 registers beside them hold
// addresses, descriptors and the epilogue: 128 fit in the 232 setmaxnreg gives two consumer
// warpgroups, 96 in the 152 of three.
void registerRule(const Config& c, const OperandInfo& ops, ir::DiagnosticEngine& diag, const ir::Location& loc) {
  const bool pingpong = c.consumers == Consumers::Pingpong;
  const bool promote = c.fp8Accum != Fp8Accum::Fast;
  // fp8_accum=promote / promote_pairs: a K step's (or two steps') sums beside the accumulators.
  const int sumSets = c.fp8Accum == Fp8Accum::PromotePairs ? 2 : promote ? 1 : 0;
  int rows = pingpong ? c.bm : c.bm / c.warpsM, cols = c.bn / c.warpsN;
  int regs = sm90Shape(c, ops.aElemBytes).regsConsumer;
  // With swapped operands a warpgroup's share is not whole m64 blocks (192 x 192 in two: 144).
  // fp8_accum=promote's K-step sums live only inside the K loop, where the epilogue's registers
  // are free: the accumulators and sums may take all but 40 of the registers.
  // blocks_per_sm=2 (one consumer warpgroup, no setmaxnreg): 128 registers a thread for everything.
  if (!regs && c.blocksPerSm == 2) regs = 128;
  int maxAcc = promote ? (regs ? regs : 255) - 40 : regs ? (c.swapAB ? regs - 56 : std::min(128, regs - 56)) : 128;
  int perThread = rows * cols / 128 * (1 + sumSets);
  if (perThread > maxAcc)
    diag.error(loc) << "bm=" << c.bm << " bn=" << c.bn << " gives each consumer thread " << perThread
                    << " f32 accumulators"
                    << (promote ? std::string(" (with fp8_accum=") + fp8AccumName(c.fp8Accum) + "'s K-step sums)"
                                : std::string())
                    << "; at most " << maxAcc << " fit in its " << (regs ? regs : 255) << " registers (use a smaller tile"
                    << (pingpong || c.warpsM * c.warpsN == 3 ? "" : " or more consumer warpgroups") << ")";
}

// split_k, stream_k and clusters: the units of the persistent loop and the blocks that share
// operands.
void schedulerRules(const Config& c, ir::DiagnosticEngine& diag, const ir::Location& loc) {
  // split_k: the K slices of a tile are separate units of the persistent loop, so clusters (which
  // walk tile pairs) and slices do not combine.
  if (c.splitK > 64)
    diag.error(loc) << "split_k=" << c.splitK << " is more slices than " << kWho
                    << " takes (at most 64; a slice should keep several K steps)";
  bool multicast = c.clusterM * c.clusterN > 1;
  if (c.splitK > 1 && multicast)
    diag.error(loc) << "split_k=" << c.splitK << " with cluster_m=" << c.clusterM << " cluster_n=" << c.clusterN
                    << " is not supported by " << kWho
                    << ": split K slices across blocks, or share an operand within a cluster, not both";
  // stream_k: a block's run of K steps may start and end inside tiles, so the units are not whole
  // tiles (split_k's slices, ping-pong's alternating tiles). A cluster walks the runs as one: its
  // blocks take the same units of cluster tiles, each its sub-tile.
  if (c.streamK && c.splitK > 1)
    diag.error(loc) << "stream_k=" << c.streamK << " with split_k=" << c.splitK << " is not supported by " << kWho
                    << ": stream-K already splits the K steps of the tail tiles; use one or the other";
  if (c.streamK && c.consumers == Consumers::Pingpong)
    diag.error(loc) << "stream_k=" << c.streamK << " with consumers=pingpong is not supported by " << kWho
                    << ": use consumers=cooperative";
  // Clusters: pairs of CTAs along M that share (multicast) the B tile, 2 or 4 CTAs along N that
  // share the A tile, or 2 x 2 CTAs that share both (each A tile along its row of the cluster, each
  // B tile along its column); other shapes are not built.
  bool pairM = c.clusterM == 2 && c.clusterN == 1, rowN = c.clusterM == 1 && (c.clusterN == 2 || c.clusterN == 4);
  bool square = c.clusterM == 2 && c.clusterN == 2;
  if (multicast && !pairM && !rowN && !square)
    diag.error(loc) << "cluster_m=" << c.clusterM << " cluster_n=" << c.clusterN << " is not supported by " << kWho
                    << ": use cluster_m=2 cluster_n=1 (two CTAs along M sharing the B tile through TMA multicast), "
                       "cluster_m=1 with cluster_n=2 or 4 (CTAs along N sharing the A tile), cluster_m=2 "
                       "cluster_n=2 (both), or no cluster";
}

// blocks_per_sm=2: two blocks on each SM, each a producer and one consumer warpgroup (256 threads
// at 128 registers: setmaxnreg's splits of two or three consumer warpgroups take the whole file),
// each within half of the SM's shared memory (less the 1 KB the hardware reserves per block).
// Clusters are left out: the runtime sizes a clustered grid by the clusters the device runs at
// once, which already counts every block an SM holds.
void blocksPerSmRules(const Config& c, const Target& t, const OperandInfo& ops, ir::DiagnosticEngine& diag,
                      const ir::Location& loc) {
  if (c.blocksPerSm <= 1) return;
  if (c.warpsM * c.warpsN != 1)
    diag.error(loc) << "blocks_per_sm=" << c.blocksPerSm << " needs one consumer warpgroup (warps_m=1 warps_n=1): "
                    << "with " << c.warpsM * c.warpsN << " the register split (setmaxnreg) takes the whole register file";
  if (c.clusterM * c.clusterN > 1)
    diag.error(loc) << "blocks_per_sm=" << c.blocksPerSm << " with cluster_m=" << c.clusterM << " cluster_n="
                    << c.clusterN << " is not supported by " << kWho << ": use one or the other";
  const int64_t perBlock = sm90Shape(c, ops.aElemBytes, ops.cElemBytes).smemBytes + 1024;
  if (c.blocksPerSm * perBlock > t.smemPerSm)
    diag.error(loc) << "blocks_per_sm=" << c.blocksPerSm << " needs " << c.blocksPerSm << " x " << perBlock
                    << " bytes of shared memory (the pipeline and the 1 KB reserved per block), but an SM of " << t.name
                    << " has " << t.smemPerSm << "; lower stages";
}

// reuse_stage: the ring stage a tile's K loop read last holds the boxes past the own slots until
// the next tile's first K step, so every tile of a block must run a whole K loop in the same ring
// (no slices, no runs that start inside a tile, no tile pairs or turns).
void reuseStageRules(const Config& c, ir::DiagnosticEngine& diag, const ir::Location& loc) {
  if (!c.reuseStage) return;
  if (c.epilogue != EpilogueStore::Tma)
    diag.error(loc) << "reuse_stage=true stages boxes of the TMA-store epilogue in the ring; it needs epilogue=tma";
  if (c.consumers == Consumers::Pingpong || c.splitK > 1 || c.streamK)
    diag.error(loc) << "reuse_stage=true is supported by " << kWho
                    << " only with consumers=cooperative, split_k=1 and stream_k=0"
                    << " (the ring stage a tile read last must be its own until the next tile starts)";
  // The boxes past the slots, (bn / 64 - 2) x bm x 128 bytes, always fit in a B stage (bn x 128
  // bytes) of a tile whose accumulators fit (bm x bn <= 16384 x warps_m; the builder asserts it).
  if (c.bn <= 128)
    diag.error(loc) << "reuse_stage=true has nothing to do at bn=" << c.bn
                    << ": the two staging slots of a warpgroup already hold every 64-column box";
  else if (c.bn % 64 != 0)
    diag.error(loc) << "reuse_stage=true stages whole 64-column boxes in the B ring, which bn=" << c.bn
                    << " does not split into: use a multiple of 64";
}

// The epilogue's stores: direct from registers, or staged for TMA (slots, pieces, stmatrix, the
// ring stage).
void epilogueRules(const Config& c, ir::DiagnosticEngine& diag, const ir::Location& loc) {
  if (c.epilogue == EpilogueStore::Smem)
    diag.error(loc) << "epilogue=smem is not supported by " << kWho << " yet; use epilogue=direct or epilogue=tma";
  if (c.stageStore == StageStore::Stmatrix && c.epilogue != EpilogueStore::Tma)
    diag.error(loc) << "stage_store=stmatrix writes the tile staged for the TMA store; it needs epilogue=tma";
  if (c.storeSlots != 0 && c.epilogue != EpilogueStore::Tma)
    diag.error(loc) << "store_slots=" << c.storeSlots
                    << " sets the staging of the TMA-store epilogue; it needs epilogue=tma";
  if (c.storePieces > 1) {
    int rows = c.consumers == Consumers::Pingpong ? c.bm : c.bm / std::max(1, c.warpsM);
    if (!c.swapAB || c.epilogue != EpilogueStore::Tma)
      diag.error(loc) << "store_pieces=" << c.storePieces << " stores a swapped tile's staged boxes in row pieces; "
                      << "it needs swap_ab=true and epilogue=tma";
    else if (rows % (8 * c.storePieces) != 0)
      diag.error(loc) << "store_pieces=" << c.storePieces << " does not cut a warpgroup's " << rows
                      << " rows into pieces of whole 8-row stmatrix blocks: use a divisor of " << rows / 8;
  }
  if (c.alignC != 16 && (c.alignC < 1 || (c.alignC & (c.alignC - 1))))
    diag.error(loc) << "align_c=" << c.alignC << " is not a power of two: use 1, 2, 4, 8 or 16";
  else if (c.alignC < 16 && c.epilogue == EpilogueStore::Tma)
    diag.error(loc) << "align_c=" << c.alignC << " describes output rows a TMA store cannot address (its strides are "
                    << "multiples of 16 bytes); use epilogue=direct";
  if (c.storeSlots == 1 && c.reuseStage)
    diag.error(loc) << "store_slots=1 with reuse_stage=true is not supported by " << kWho
                    << ": the ring stage holds only the boxes past two slots";
  reuseStageRules(c, diag, loc);
}

// epilogue=tma with an f32 output (OperandInfo::cElemBytes = 4): boxes of 32 columns staged by
// st.shared.v2 pairs. stmatrix (stage_store=stmatrix, and swap_ab's transposed staging) moves
// 16-bit matrices only, and with reuse_stage the boxes past the slots must fit the B stage.
void stagedOutputRules(const Config& c, const OperandInfo& ops, ir::DiagnosticEngine& diag, const ir::Location& loc) {
  if (c.epilogue != EpilogueStore::Tma) return;
  if (ops.cElemBytes == 4 && c.stageStore == StageStore::Stmatrix)
    diag.error(loc) << "stage_store=stmatrix moves 16-bit matrices; an f32 output is staged by st.shared.v2 pairs: "
                    << "use stage_store=pairs";
  if (ops.cElemBytes == 4 && c.swapAB)
    diag.error(loc) << "swap_ab=true with epilogue=tma stages the transposed tile by stmatrix .trans, which moves "
                    << "16-bit matrices; with an f32 output use swap_ab=false or epilogue=direct";
  const sm90::Geometry geo = sm90::geometryOf(c, ops.cElemBytes);
  const int region = c.bn / std::max(1, c.warpsM);  // a warpgroup's rows of a B stage's view
  if (geo.ringBoxes && int64_t(geo.ringBoxes) * geo.rowsPerConsumer > region)
    diag.error(loc) << "reuse_stage=true stages the " << geo.ringBoxes << " boxes of " << geo.boxCols << " x "
                    << geo.rowsPerConsumer << " past a warpgroup's slots in its " << region
                    << " rows of the B stage, which hold " << region / geo.rowsPerConsumer
                    << " (an f32 output's boxes are 32 columns): use reuse_stage=false";
}

}  // namespace

bool validateSm90WsPersistent(const Config& c, const Target& t, const OperandInfo& ops, ir::DiagnosticEngine& diag,
                              const ir::Location& loc) {
  size_t errors = diag.errorCount();
  if (!t.wgmma || !t.tma || !t.setmaxnreg) {
    diag.error(loc) << "strategy " << kWho << " needs wgmma, TMA and setmaxnreg, which " << t.name
                    << " does not have (use sm_90a)";
    return false;
  }
  operandRules(c, ops, diag, loc);
  tileRules(c, diag, loc);
  if (diag.errorCount() == errors) registerRule(c, ops, diag, loc);
  schedulerRules(c, diag, loc);
  epilogueRules(c, diag, loc);
  if (diag.errorCount() == errors) stagedOutputRules(c, ops, diag, loc);
  if (diag.errorCount() == errors) blocksPerSmRules(c, t, ops, diag, loc);
  if (diag.errorCount() != errors) return false;
  Sm90Shape s = sm90Shape(c, ops.aElemBytes, ops.cElemBytes);
  if (s.smemBytes > t.maxSmemPerBlock)
    diag.error(loc) << "the pipeline needs " << s.smemBytes << " bytes of shared memory (" << c.stages << " stages x "
                    << s.stageBytes << " bytes, "
                    << (s.cBytes ? std::to_string(s.cBytes) + " bytes of output staging, " : std::string())
                    << s.smemBytes - s.barrierOffset << " bytes of barriers), but " << t.name << " allows at most "
                    << t.maxSmemPerBlock << " bytes per block; lower stages, bm or bn";
  return diag.errorCount() == errors;
}

}  // namespace kiln
