#pragma once
// Internal to the warp-specialized simulator (ws_sim.h): the block, its agents and the hardware
// state they share. ws_sim.cpp runs ops; ws_sim_async.cpp models TMA and wgmma.
#include <bit>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <unordered_map>

#include "tests/unit/testing/ws_sim.h"

namespace kiln::testing::wssim {
using namespace ir;

using Lanes = std::vector<uint64_t>;
using Mask = std::vector<char>;

inline float asF(uint64_t b) { return std::bit_cast<float>(uint32_t(b)); }
inline uint64_t fromF(float f) { return std::bit_cast<uint32_t>(f); }
inline int64_t asI(uint64_t b, const Type& t) { return t.isScalar(ScalarType::I32) ? int64_t(int32_t(uint32_t(b))) : int64_t(b); }
inline uint64_t fromI(int64_t v, const Type& t) {
  if (t.isScalar(ScalarType::I32)) return uint32_t(int32_t(v));
  if (t.isScalar(ScalarType::I1)) return uint64_t(v & 1);
  return uint64_t(v);
}

struct Barrier {
  int64_t count = 0, pending = 0, tx = 0, phase = 0;
  void maybeComplete() {
    if (pending <= 0 && tx == 0) {
      ++phase;
      pending = count;
    }
  }
};

struct WgmmaRead {
  uint32_t addr;
  uint16_t value;
};

class BlockSim;

// One role's threads (or every thread, outside the roles), run in lockstep under an active mask.
class Agent {
 public:
  Agent(BlockSim& b, int index) : b_(b), index_(index) {}
  void runBlock(const ir::Block& blk, const Mask& m);

 private:
  void exec(const Operation& op, const Mask& m);
  void kernOp(const Operation& op, const Mask& m);
  void wgmma(const Operation& op, const Mask& m);
  // ws_sim_async.cpp
  void tmaLoad(const Operation& op, const Mask& m);
  void tmaStore(const Operation& op, const Mask& m);
  void stShared(const Operation& op, const Mask& m);
  void wgmmaDesc(const Operation& op, const Mask& m);
  void wgmmaWait(const Operation& op, const Mask& m);
  const Lanes& get(const Value* v);
  Lanes& set(const Value* v);
  int64_t uniform(const Value* v, const Mask& m);

  BlockSim& b_;
  int index_;
  std::unordered_map<const Value*, Lanes> vals_;
  std::map<int, std::vector<std::vector<WgmmaRead>>> groups_;  // per warpgroup: committed groups
  std::map<int, std::vector<WgmmaRead>> open_;
  friend class BlockSim;
};

class BlockSim {
 public:
  BlockSim(const WsLaunch& l, GlobalMemory& mem, uint32_t bx)
      : l_(l), mem_(mem), T_(int(l.kernel->intAttr("threads", 32))), bx_(bx),
        smem_(size_t(l.kernel->intAttr("smem_bytes", 0)), 0xFF) {}

  void run() {
    Agent all(*this, -1);
    const ir::Block& body = l_.kernel->body();
    for (unsigned i = 0; i < body.numArguments(); ++i) shared_[body.argument(i)] = Lanes(size_t(T_), l_.args.at(i));
    Mask full(size_t(T_), 1);
    std::vector<const Operation*> roles;
    for (const auto& op : body.operations()) {
      if (op->is("kern.role")) {
        roles.push_back(op.get());
        continue;
      }
      if (!roles.empty()) {
        runRoles(roles);
        roles.clear();
      }
      all.exec(*op, full);
      for (auto& [v, lanes] : all.vals_) shared_[v] = lanes;
    }
    if (!roles.empty()) runRoles(roles);
  }

  // ---- what agents share ----
  const WsLaunch& l_;
  GlobalMemory& mem_;
  int T_;
  uint32_t bx_;
  std::vector<uint8_t> smem_;
  std::unordered_map<const Value*, Lanes> shared_;  // values defined outside the roles
  std::map<uint32_t, Barrier> barriers_;

  uint8_t* shared(uint64_t addr, size_t bytes) {
    if (addr + bytes > smem_.size()) throw std::runtime_error("shared access out of bounds at " + std::to_string(addr));
    return smem_.data() + addr;
  }

  // Blocks the calling agent until cond() holds, letting the others run.
  void waitUntil(int me, const std::function<bool()>& cond) {
    int idle = 0;
    while (!cond()) {
      uint64_t before = progress_;
      handOver(me);
      if (progress_ != before) idle = 0;
      else if (++idle > agents_ + 1) throw std::runtime_error("deadlock: every role waits on an mbarrier");
    }
  }
  uint64_t progress_ = 0;  // barrier arrivals and completed copies so far
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
  // One agent per warpgroup of each role: warpgroups run independently on the hardware (only
  // mbarriers and named barriers order them), so they do here too.
  void runRoles(const std::vector<const Operation*>& roleOps) {
    std::vector<const Operation*> roles;
    std::vector<int64_t> wgOf;
    for (const Operation* r : roleOps) {
      auto wg = r->intsAttr("warpgroups");
      for (int64_t w = wg[0]; w < wg[0] + wg[1]; ++w) {
        roles.push_back(r);
        wgOf.push_back(w);
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
            Agent a(*this, i);
            Mask m(size_t(T_), 0);
            for (int t = 0; t < T_; ++t) m[size_t(t)] = t / 128 == wgOf[size_t(i)];
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

  std::mutex mu_;
  std::condition_variable cv_;
  int turn_ = 0, agents_ = 0;
  bool failed_ = false;
  std::vector<char> done_;
};


// The element (row, col) of a wgmma operand through the canonical 128B-swizzled layouts (ws_sim_async.cpp).
uint32_t canonicalAddress(uint64_t desc, bool mnMajor, int64_t mn, int64_t k);

}  // namespace kiln::testing::wssim
