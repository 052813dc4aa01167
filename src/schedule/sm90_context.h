#pragma once
// Internal to the sm90_ws_persistent strategy: what the kernel builder (sm90_ws_persistent.cpp)
// hands the role builders (sm90_producer.cpp, sm90_consumer.cpp).
#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "dialects/kern/kern_ops.h"
#include "schedule/config.h"
#include "schedule/gemm_analysis.h"
#include "dialects/kern/kern_builder.h"

namespace kiln::sm90 {

struct Plan {
  const GemmProgram& g;
  const Config& cfg;
  const Target& target;
  KernBuilder& b;
  ir::DiagnosticEngine& diag;

  std::map<std::string, ir::Value*> args{}, dims{};  // kernel parameters by name (two namespaces)
  ir::Value *tmA = nullptr, *tmB = nullptr;       // the operands' tensor maps
  ir::Value *tmC = nullptr, *sC = nullptr;        // epilogue=tma: the output's map and staging buffer
  int cSlots = 0;                                 // epilogue=tma: 64-column boxes staged at once
  // reuse_stage: a view of the B ring, [stages * warps_m, bn / warps_m, 64]: slot s * warps_m + wg
  // holds warpgroup wg's boxes past cSlots in ring stage s (null without reuse_stage).
  ir::Value* sR = nullptr;
  ir::Value *sA = nullptr, *sB = nullptr;         // operand rings: [stages, rows, 64] 128B-swizzled
  ir::Value *full = nullptr, *empty = nullptr;    // mbarrier rings, one barrier per stage
  ir::Value* turn = nullptr;  // consumers=pingpong: turn[wg] completes when wg may start its K loop
  ir::Value* rank = nullptr;  // cluster_m=2 or cluster_n>1: the block's rank in its cluster (kern.cluster_rank)
  ir::Value *dimM = nullptr, *dimN = nullptr, *dimK = nullptr;
  ir::Value* ktiles = nullptr;                    // ceil(K / bk): K steps per tile
  ir::Value* ksteps = nullptr;                    // K steps per unit: ktiles, or split_k's ceil(ktiles / S)
  // split_k=S: the runtime's workspace, and per unit its tile's linear index, its K slice and the
  // slice's first K step (null without split_k).
  ir::Value *wsFlags = nullptr, *wsPartials = nullptr;
  ir::Value *tile = nullptr, *split = nullptr, *kbase = nullptr;
  // stream_k: per unit its K steps (ksteps, kbase above are the unit's) and, for a unit that
  // finishes a tile lower blocks began, how many of them hold its partial sums.
  ir::Value* peers = nullptr;
  int64_t stageTxBytes = 0;                       // bytes TMA writes per stage (A box + B boxes)

  // Per tile: the tile loop's body arguments and the ring position the tile starts at. Both roles
  // derive it from the tile's ordinal, so they agree without talking: the K steps of earlier tiles
  // are iter * ktiles, every one of which used one stage.
  ir::Value *iter = nullptr, *m0 = nullptr, *n0 = nullptr, *batch = nullptr;
  ir::Value *stage0 = nullptr, *phase0 = nullptr;

  bool batched() const { return !g.dimBatch.empty(); }
  int splits() const { return cfg.splitK; }
  bool streamK() const { return cfg.streamK != 0; }
  bool pingpong() const { return cfg.consumers == Consumers::Pingpong; }
  // cluster_m=2: the two blocks of a cluster compute M-adjacent tiles that share the B tile; each
  // loads half of the B stage and multicasts it to both. cluster_n=2 or 4: the blocks compute
  // N-adjacent tiles that share the A tile; each loads bm / cluster_n rows of the A stage and
  // multicasts them to all. Either way every block's stage is written by every block's producer.
  bool clustered() const { return clusterSize() > 1; }
  int clusterSize() const { return cfg.clusterM * cfg.clusterN; }
  // The attributes of the ring's mbarrier waits: CTA scope (the default) with or without a
  // cluster. The full barriers complete by TMA complete-tx, which orders the copies' writes into
  // this block's shared memory before the phase completes, whichever block issued them; the empty
  // barriers carry no data, only that the releasing warps' reads are complete (wgmma.wait_group
  // before the arrive). A cluster-scope acquire would add CCTL.IVALL (an L1 invalidation) after
  // every wait. CUTLASS's TMA pipelines synchronize the same way.
  std::vector<ir::NamedAttr> waitAttrs() const { return {}; }
  // Rows of a tile one consumer warpgroup computes (64 or 128, its m64 blocks; with swap_ab any
  // multiple of 8 up to 256): a share of the tile when the warpgroups cooperate, the whole tile
  // when they take turns.
  int rowsPerConsumer() const { return pingpong() ? cfg.bm : cfg.bm / cfg.warpsM; }
  // Columns of a tile one consumer warpgroup computes: all of them, or with warps_n (swap_ab only)
  // a share of whole m64 blocks. Consumer warpgroup wg takes row share wg / warps_n and column
  // share wg % warps_n.
  int colsPerConsumer() const { return cfg.bn / cfg.warpsN; }
  // Rows of one staged piece of a 64-column box (epilogue=tma): the warpgroup's rows, or with
  // store_pieces a piece of them, one TMA store each.
  int rowsPerPiece() const { return rowsPerConsumer() / std::max(1, cfg.storePieces); }
  // Consumer warpgroups: warps_m x warps_n cooperating on each tile, or two taking turns.
  int groups() const { return cfg.warpsM * cfg.warpsN; }
  // A consumer warpgroup's wgmma of one k16 step: `blocks` of them, each with `nacc` f32
  // accumulators per thread. Normally its rows in m64 blocks, each as wide as the tile (wgmma N =
  // bn). swap_ab: its columns in m64 blocks, each as wide as its rows (wgmma N = rows), B's
  // stage as wgmma's A and A's as its B, so each block holds its 64 columns x rows transposed.
  bool swapped() const { return cfg.swapAB; }
  int wgmmaBlocks() const { return swapped() ? colsPerConsumer() / 64 : rowsPerConsumer() / 64; }
  int wgmmaN() const { return swapped() ? rowsPerConsumer() : cfg.bn; }
  int accPerBlock() const { return wgmmaN() / 2; }
};

// (stage, phase) after one more step of a ring of `stages`: the phase flips when the stage wraps.
std::pair<ir::Value*, ir::Value*> nextStage(KernBuilder& b, ir::Value* stage, ir::Value* phase, int stages);

// The producer role: one elected thread waits for a free stage, arms its full barrier with the
// stage's bytes and issues the TMA copies of A and B for each K step of the tile.
void buildProducer(Plan& p);
// The consumer role: waits for each full stage, runs the wgmma of the K step, keeps one wgmma group
// in flight while releasing the previous stage, then runs the fused epilogue. False after a
// diagnostic from the epilogue.
bool buildConsumer(Plan& p);

// Inside the consumer role (sm90_consumer.cpp, sm90_epilogue.cpp,
// sm90_split_handover.cpp):
// the named barrier of consumer warpgroup wg's 128 threads (0 is kern.barrier's);
ir::Value* groupBarrier(KernBuilder& b, ir::Value* wg);
// whether this thread is its warpgroup's first, the one that issues and waits for TMA stores;
ir::Value* isElected(KernBuilder& b);
// gives stage s back to the producers: to this block's, and in a cluster to every peer's too, whose
// multicast also overwrites this block's copy of the stage (after the warp's wgmma_wait retired the
// groups that read it);
void releaseStage(Plan& p, ir::Value* s);
// where a consumer warpgroup's operands start in a stage: its first row of A (its share of the
// tile's rows), its first row of B (with warps_n: its columns' first B row);
struct StepOperands {
  ir::Value *rowA, *rowB;
};
// one K step of the warpgroup on stage s: wait for its copies (full[s] at phase ph), then every
// wgmma of the step into `sums` (its results replace them), and commit the group. The step's first
// wgmma has scale_d = firstScale(on), `on` being true;
void issueKStep(Plan& p, const StepOperands& at, ir::Value* s, ir::Value* ph,
                const std::function<ir::Value*(ir::Value* on)>& firstScale, std::vector<ir::Value*>& sums);
// split_k / stream_k (sm90_split_handover.cpp): after the unit's K loop, with its sums `out`: a unit
// that does not finish its tile hands them over; the one that does adds its peers' and calls
// `epilogue` on the totals. False if that did;
bool buildSplitEpilogue(Plan& p, ir::Value* wg, const std::vector<ir::Value*>& out,
                        const std::function<bool(const std::vector<ir::Value*>&)>& epilogue);
// epilogue_loads=early: the loads that preloadEpilogue made, per unit of the epilogue (the whole
// warpgroup tile for epilogue=direct; for epilogue=tma each box or box piece, then the columns
// past the last whole box), each a map from load op to its values.
using EarlyLoads = std::vector<std::map<const ir::Operation*, std::vector<ir::Value*>>>;
// the fused epilogue of one tile's accumulators `out` for consumer warpgroup wg (its warp cwarp
// among the consumer warps, its first row rowA and first column colB of the tile); reuse_stage:
// ringStage is the ring stage the tile's K loop read last, which holds the boxes past the staging
// slots; epilogue_loads=early: `early` holds the loads preloadEpilogue made with the same
// arguments. False after a diagnostic for an epilogue op it cannot lower.
bool buildEpilogue(Plan& p, ir::Value* lane, ir::Value* cwarp, ir::Value* wg, ir::Value* rowA, ir::Value* colB,
                   const std::vector<ir::Value*>& out, ir::Value* ringStage = nullptr, EarlyLoads* early = nullptr);
// and the epilogue's loads of vectors and scalars (sm80::preloadEpilogue) at the insertion point,
// for buildEpilogue to use (epilogue_loads=early). False after a diagnostic.
bool preloadEpilogue(Plan& p, ir::Value* lane, ir::Value* cwarp, ir::Value* rowA, ir::Value* colB, EarlyLoads& early);
// epilogue_loads=prefetch: the lines of global memory the epilogue's vector and scalar loads will
// read for the tile (sm80::prefetchEpilogue), prefetched into L1 at the insertion point by the
// warpgroup's 128 threads. False after a diagnostic.
bool prefetchEpilogue(Plan& p, ir::Value* lane, ir::Value* cwarp, ir::Value* rowA);

}  // namespace kiln::sm90
