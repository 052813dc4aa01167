// The warp-specialized simulator's blocks and clusters (contract in ws_sim.h): a block's shared
// memory and barriers, a cluster's blocks run together up to each cluster barrier or group of
// roles, then one agent per warpgroup of each role taking turns; and the launch that runs them.
#include <algorithm>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "tests/unit/testing/ws_sim.h"
#include "tests/unit/testing/ws_sim_internal.h"

namespace kiln::testing {
using namespace ir;

namespace wssim {

BlockSim::BlockSim(const WsLaunch& l, GlobalMemory& mem, uint32_t bx, ClusterSim& cluster, int rank)
    : l_(l), mem_(mem), T_(int(l.kernel->intAttr("threads", 32))), bx_(bx), cluster_(cluster), rank_(rank),
      smem_(size_t(l.kernel->intAttr("smem_bytes", 0)), 0xFF), landings_(smem_.size()), all_(*this, -1),
      progress_(cluster.progress_) {}

BlockSim& BlockSim::peer(int64_t rank) {
  BlockSim& p = cluster_.block(*this, rank);
  if (&p != this) {
    if (cluster_.barriersPassed_ == 0)
      throw std::runtime_error("a block accessed its peer's shared memory before a cluster barrier (the peer may "
                               "not have initialized its barriers yet)");
    ++cluster_.remote_;
  }
  return p;
}

// The writer's first release after the access publishes it; this block must have acquired it.
void BlockSim::requireAcquired(const BlockSim& writer, uint64_t epoch, const std::string& what) const {
  auto r = std::lower_bound(writer.releases_.begin(), writer.releases_.end(), epoch);
  if (r == writer.releases_.end()) throw std::runtime_error(what + " and has not released since");
  auto a = acquired_.find(&writer);
  if (a == acquired_.end() || a->second < *r)
    throw std::runtime_error(what + " and released, without acquiring that release first");
}

void BlockSim::waitUntil(int me, const std::function<bool()>& cond) { cluster_.waitUntil(me, cond); }
void BlockSim::handOver(int me) { cluster_.handOver(me); }

ClusterSim::ClusterSim(const WsLaunch& l, GlobalMemory& mem, uint32_t firstBlock, int size, int clusterSize)
    : clusterSize_(clusterSize), firstBlock_(firstBlock) {
  for (int r = 0; r < size; ++r)
    blocks_.push_back(std::make_unique<BlockSim>(l, mem, firstBlock + uint32_t(r), *this, r % clusterSize));
}

BlockSim& ClusterSim::block(const BlockSim& from, int64_t rank) {
  if (rank < 0 || rank >= clusterSize_)
    throw std::runtime_error("rank " + std::to_string(rank) + " is outside the cluster");
  size_t first = size_t((from.bx_ - firstBlock_) / uint32_t(clusterSize_)) * size_t(clusterSize_);
  return *blocks_[first + size_t(rank)];
}

// The kernel body in segments: the lockstep ops of each block in turn, up to a group of roles (run
// by every agent of every block together) or a cluster barrier (which every block has then
// reached).
void ClusterSim::run() {
  const WsLaunch& l = blocks_.front()->l_;
  const ir::Block& body = l.kernel->body();
  int T = blocks_.front()->T_;
  for (auto& b : blocks_)
    for (unsigned i = 0; i < body.numArguments(); ++i) b->shared_[body.argument(i)] = Lanes(size_t(T), l.args.at(i));
  Mask full(size_t(T), 1);
  std::vector<const Operation*> ops;
  for (const auto& op : body.operations()) ops.push_back(op.get());
  for (size_t i = 0; i < ops.size();) {
    if (ops[i]->is("kern.role")) {
      size_t j = i;
      while (j < ops.size() && ops[j]->is("kern.role")) ++j;
      runRoles(std::vector<const Operation*>(ops.begin() + long(i), ops.begin() + long(j)));
      i = j;
    } else if (ops[i]->is("kern.cluster_barrier")) {
      ++barriersPassed_;
      remoteAtBarrier_ = remote_;
      ++i;
    } else {
      size_t j = i;
      while (j < ops.size() && !ops[j]->is("kern.role") && !ops[j]->is("kern.cluster_barrier")) ++j;
      for (auto& b : blocks_)
        for (size_t k = i; k < j; ++k) {
          b->all_.exec(*ops[k], full);
          for (auto& [v, lanes] : b->all_.vals_) b->shared_[v] = lanes;
        }
      i = j;
    }
  }
  for (auto& b : blocks_) b->checkOutstandingStores();
  if (remote_ != remoteAtBarrier_)
    throw std::runtime_error("a block of the cluster exits while its peer may still access its shared memory "
                             "(no cluster barrier after the last remote access)");
}

// One agent per warpgroup of each role of each block: warpgroups run independently on the hardware
// (only mbarriers and named barriers order them), so they do here too.
void ClusterSim::runRoles(const std::vector<const Operation*>& roleOps) {
  std::vector<const Operation*> roles;
  std::vector<int64_t> wgOf;
  std::vector<BlockSim*> blockOf;
  for (auto& b : blocks_)
    for (const Operation* r : roleOps) {
      auto wg = r->intsAttr("warpgroups");
      for (int64_t w = wg[0]; w < wg[0] + wg[1]; ++w) {
        roles.push_back(r);
        wgOf.push_back(w);
        blockOf.push_back(b.get());
      }
    }
  agents_ = int(roles.size());
  done_.assign(roles.size(), 0);
  turn_ = 0;
  failed_ = false;
  std::string error;
  std::vector<std::thread> threads;
  for (int i = 0; i < agents_; ++i) {
    threads.emplace_back([&, i] {
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return turn_ == i || failed_; });
      }
      try {
        if (!failed_) {
          BlockSim& b = *blockOf[size_t(i)];
          Agent a(b, i);
          Mask m(size_t(b.T_), 0);
          for (int t = 0; t < b.T_; ++t) m[size_t(t)] = t / 128 == wgOf[size_t(i)];
          a.exec(*roles[size_t(i)], m);
        }
      } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lock(mu_);
        if (!failed_ && error.empty()) error = e.what();
        failed_ = true;
      }
      std::lock_guard<std::mutex> lock(mu_);
      done_[size_t(i)] = 1;
      for (int k = 1; k <= agents_; ++k)
        if (!done_[size_t((i + k) % agents_)]) {
          turn_ = (i + k) % agents_;
          break;
        }
      cv_.notify_all();
    });
  }
  for (auto& t : threads) t.join();
  agents_ = 0;
  if (!error.empty()) throw std::runtime_error(error);
}

}  // namespace wssim

std::string simulateWarpSpecialized(const WsLaunch& launch, GlobalMemory& mem) {
  try {
    auto c = launch.kernel->intsAttr("cluster");
    int size = c.size() == 3 ? int(c[0] * c[1] * c[2]) : 1;
    if (launch.blocks % uint32_t(size) != 0) return "the grid is not a whole number of clusters";
    // Blocks that wait on each other's flags (split-K) run together, as the persistent grid's
    // co-resident blocks do on the GPU; otherwise one cluster at a time.
    bool flags = launch.kernel->attr("workspace") != nullptr;
    launch.kernel->walk([&](const Operation& op) { flags |= op.is("kern.spin_wait") || op.is("kern.red_release"); });
    if (flags) wssim::ClusterSim(launch, mem, 0, int(launch.blocks), size).run();
    else
      for (uint32_t x = 0; x < launch.blocks; x += uint32_t(size)) wssim::ClusterSim(launch, mem, x, size, size).run();
  } catch (const std::exception& e) {
    return e.what();
  }
  return {};
}

}  // namespace kiln::testing
