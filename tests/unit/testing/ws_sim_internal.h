#pragma once
// Internal to the warp-specialized simulator (ws_sim.h): the block, its agents and the hardware
// state they share. ws_sim.cpp runs ops; ws_sim_async.cpp models TMA and wgmma; ws_sim_tiles.cpp
// the tile loops; ws_sim_cluster.cpp runs the blocks, clusters and agents.
#include <bit>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "tests/unit/testing/sim_values.h"
#include "tests/unit/testing/ws_sim.h"

namespace kiln::testing::wssim {
using namespace ir;

using Lanes = std::vector<uint64_t>;
using Mask = std::vector<char>;

using namespace simvalues;

struct Barrier {
  int64_t count = 0, pending = 0, tx = 0, phase = 0;
  void maybeComplete() {
    if (pending <= 0 && tx == 0) {
      ++phase;
      pending = count;
    }
  }
};

// An operand element a wgmma read (1 or 2 bytes), and its value then.
struct WgmmaRead {
  uint32_t addr;
  uint16_t value;
  uint8_t bytes;
};

// A byte of shared memory a TMA store read as its source, and its value then.
struct StoreRead {
  uint32_t addr;
  uint8_t value;
};

// One thread's bulk async-groups of TMA stores (cp.async.bulk.commit_group / wait_group): the
// stores not yet committed, then the committed groups, oldest first.
struct BulkGroups {
  std::vector<StoreRead> open;
  std::vector<std::vector<StoreRead>> committed;
};

class BlockSim;
class ClusterSim;

// One role's threads (or every thread, outside the roles), run in lockstep under an active mask.
class Agent {
 public:
  Agent(BlockSim& b, int index) : b_(b), index_(index) {}
  void runBlock(const ir::Block& blk, const Mask& m);
  void exec(const Operation& op, const Mask& m);

 private:
  void kernOp(const Operation& op, const Mask& m);
  void wgmma(const Operation& op, const Mask& m);
  void tileLoop(const Operation& op, const Mask& m);
  // ws_sim_async.cpp
  void tmaLoad(const Operation& op, const Mask& m);
  void tmaStore(const Operation& op, const Mask& m);
  void stShared(const Operation& op, const Mask& m);
  void stSharedV4(const Operation& op, const Mask& m);
  void ldShared(const Operation& op, const Mask& m);
  void ldSharedRemoteV4(const Operation& op, const Mask& m);
  void stmatrix(const Operation& op, const Mask& m);
  void wgmmaDesc(const Operation& op, const Mask& m);
  void wgmmaWait(const Operation& op, const Mask& m);
  // Throws when `op` (not a wgmma, which may chain them) reads a wgmma result still in flight.
  void checkNoResultInFlight(const Operation& op) const;
  // Values `to` take the values of `from` (an scf.for's carried values and results): one that takes
  // a wgmma result in flight is in flight with it, until the wait that retires it.
  void carryInFlight(const std::vector<const Value*>& from, const std::vector<const Value*>& to);
  void bulkCommit(const Mask& m);
  void bulkWait(const Operation& op, const Mask& m);
  const Lanes& get(const Value* v);
  Lanes& set(const Value* v);
  int64_t uniform(const Value* v, const Mask& m);

  BlockSim& b_;
  int index_;
  std::unordered_map<const Value*, Lanes> vals_;
  std::map<int, std::vector<std::vector<WgmmaRead>>> groups_;  // per warpgroup: committed groups
  std::map<int, std::vector<WgmmaRead>> open_;
  // wgmma results whose group has not been waited for (the PTX ISA leaves reading them undefined;
  // only a later wgmma of the same warpgroup may take them as its accumulators), by group as above.
  // A group has a serial, and a value is in flight with the group of its latest assignment: a loop
  // issues the same wgmma values again before their older group retires, and the values it carries
  // join the group of what they carry.
  struct ResultGroup {
    uint64_t serial = 0;
    std::vector<const Value*> values;
  };
  std::map<int, std::vector<ResultGroup>> resultGroups_;
  std::map<int, ResultGroup> openResults_;
  std::unordered_map<const Value*, uint64_t> inFlight_;  // value -> its group's serial
  uint64_t nextSerial_ = 1;
  // Per mbarrier of the block (by address), how many of its phases this agent has seen complete
  // (through kern.mbarrier_wait). A wgmma may read a TMA copy's bytes only once its agent has seen
  // the phase the copy completes.
  std::unordered_map<uint32_t, int64_t> phasesSeen_;
  void seePhases(uint32_t barrier, int64_t completed);
  ResultGroup* groupWithSerial(uint64_t serial);
  friend class BlockSim;
  friend class ClusterSim;
};

// One block: its shared memory, barriers and the values its threads share outside the roles.
class BlockSim {
 public:
  BlockSim(const WsLaunch& l, GlobalMemory& mem, uint32_t bx, ClusterSim& cluster, int rank);

  const WsLaunch& l_;
  GlobalMemory& mem_;
  int T_;
  uint32_t bx_;
  ClusterSim& cluster_;
  int rank_;  // in the cluster
  std::vector<uint8_t> smem_;
  // Per byte of shared memory, the latest TMA copy into it: the mbarrier (address + 1; 0 for none)
  // it completes on, and how many of that barrier's phases have completed once it has.
  struct Landing {
    uint32_t barrierPlus1 = 0;
    int64_t phases = 0;
  };
  std::vector<Landing> landings_;
  std::unordered_map<const Value*, Lanes> shared_;  // values defined outside the roles
  std::map<uint32_t, Barrier> barriers_;
  Agent all_;                                 // every thread, in lockstep, outside the roles
  uint64_t& progress_;                        // the cluster's: barrier arrivals and completed copies
  // Split-K's flag protocol, as the PTX memory model orders it across blocks: the epochs of this
  // block's releases (kern.red_release), in order, and per other block the latest of its releases
  // this block has acquired (kern.spin_wait on a flag it released).
  std::vector<uint64_t> releases_;
  std::map<const BlockSim*, uint64_t> acquired_;
  // The split-K cluster hand-over through shared memory (DSMEM), ordered the same way: the epoch of
  // this block's last 16-byte store to each word of its shared memory, the last read of each word
  // by another block (which must be released and acquired before this block overwrites it), and
  // per barrier of this block the cluster-scope releases that arrived on it (a cluster-scope wait
  // acquires them).
  std::map<uint64_t, uint64_t> smemWrites_;
  std::map<uint64_t, std::pair<const BlockSim*, uint64_t>> smemPeerReads_;
  std::map<uint32_t, std::vector<std::pair<const BlockSim*, uint64_t>>> barrierReleases_;
  // Throws unless this block has acquired a release `writer` made after `epoch` (global words and
  // DSMEM alike); `what` begins the sentence ("a block read global memory another block wrote").
  void requireAcquired(const BlockSim& writer, uint64_t epoch, const std::string& what) const;
  // Per thread of the block (bulk groups are per thread, whichever role or lockstep part issues).
  std::map<int, BulkGroups> bulk_;
  // Named barriers (bar.sync id, threads) that span warpgroups, hence agents: the threads arrived
  // in the current generation; the barrier completes, and the generation advances, at `threads`.
  struct NamedBarrier {
    int64_t threads = 0, arrived = 0;
    uint64_t generation = 0;
    const ir::Operation* first = nullptr;  // the instruction the generation's first arrivals executed
  };
  std::map<int64_t, NamedBarrier> namedBarriers_;

  // Throws unless every byte a retired (or, at the block's end, outstanding) store group read still
  // holds its value from the store's issue; `when` ends the sentence.
  void checkStoreSource(const std::vector<StoreRead>& group, const std::string& when);
  void checkOutstandingStores();

  uint8_t* shared(uint64_t addr, size_t bytes) {
    if (addr + bytes > smem_.size()) throw std::runtime_error("shared access out of bounds at " + std::to_string(addr));
    return smem_.data() + addr;
  }
  // The block of the cluster with this rank, for a remote access from this one (which must follow
  // a cluster barrier: before it the peer may not have initialized its barriers).
  BlockSim& peer(int64_t rank);
  void waitUntil(int me, const std::function<bool()>& cond);
  void handOver(int me);
};

// The blocks of one cluster (one block without a cluster), simulated together: their lockstep parts
// in turn up to each cluster barrier or role group, then every role agent of every block taking
// turns (ws_sim.h).
class ClusterSim {
 public:
  // `size` blocks from firstBlock, in clusters of `clusterSize` (all of them: one cluster; the
  // whole grid with split-K or stream-K, whose blocks wait on each other's flags and so run
  // together, in clusters or not).
  ClusterSim(const WsLaunch& l, GlobalMemory& mem, uint32_t firstBlock, int size, int clusterSize);
  int clusterSize() const { return clusterSize_; }
  void run();

  // The block of rank `rank` in the cluster of `from`.
  BlockSim& block(const BlockSim& from, int64_t rank);
  int size() const { return int(blocks_.size()); }
  uint64_t progress_ = 0;    // barrier arrivals and completed copies so far
  // Global stores, for the cross-block visibility check of ld.global: per 4-byte word, the block
  // that wrote it last and the epoch of the write. A block's later release publishes its writes;
  // a block may read another's word only once it has acquired a release made after the write.
  struct GlobalWrite {
    const BlockSim* block;
    uint64_t epoch;
  };
  std::unordered_map<uint64_t, GlobalWrite> writes_;
  std::unordered_map<uint64_t, std::vector<std::pair<const BlockSim*, uint64_t>>> flagReleases_;  // per flag
  uint64_t epoch_ = 0;
  int barriersPassed_ = 0;   // cluster barriers every block has passed
  uint64_t remote_ = 0;      // accesses of one block to another's shared memory or barriers
  uint64_t remoteAtBarrier_ = 0;

  // Blocks the calling agent until cond() holds, letting the others run.
  void waitUntil(int me, const std::function<bool()>& cond) {
    int idle = 0;
    while (!cond()) {
      uint64_t before = progress_;
      handOver(me);
      if (progress_ != before) idle = 0;
      else if (++idle > agents_ + 1) throw std::runtime_error("deadlock: every role waits on an mbarrier or a flag");
    }
  }
  // Lets the other agents run (after an arrive); returns when it is this agent's turn again.
  void handOver(int me) {
    if (me < 0 || agents_ <= 1) return;
    std::unique_lock<std::mutex> lock(mu_);
    int next = me;
    for (int i = 1; i <= agents_; ++i) {
      int c = (me + i) % agents_;
      if (!done_[size_t(c)]) {
        next = c;
        break;
      }
    }
    if (next == me) return;
    turn_ = next;
    cv_.notify_all();
    cv_.wait(lock, [&] { return turn_ == me || failed_; });
    if (failed_) throw std::runtime_error("stopped");
  }

 private:
  void runRoles(const std::vector<const Operation*>& roleOps);

  std::vector<std::unique_ptr<BlockSim>> blocks_;
  int clusterSize_ = 1;
  uint32_t firstBlock_ = 0;
  std::mutex mu_;
  std::condition_variable cv_;
  int turn_ = 0, agents_ = 0;
  bool failed_ = false;
  std::vector<char> done_;
};

// The element (row, col) of a wgmma operand through the canonical 128B-swizzled layouts (ws_sim_async.cpp).
uint32_t canonicalAddress(uint64_t desc, bool mnMajor, int64_t mn, int64_t k, int eb);

}  // namespace kiln::testing::wssim
