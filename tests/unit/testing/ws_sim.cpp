// The warp-specialized kern IR simulator (contract in ws_sim.h): an agent (one role's warpgroup, or
// every thread outside the roles) running the kernel's ops. The blocks and clusters that run the
// agents: ws_sim_cluster.cpp.
#include "tests/unit/testing/ws_sim.h"
#include "tests/unit/testing/ws_sim_internal.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <unordered_map>

#include "dialects/kern/kern_ops.h"
#include "kiln/float_formats.h"
#include "tests/unit/testing/kern_sim_math.h"

namespace kiln::testing {
using namespace ir;

namespace wssim {

const Lanes& Agent::get(const Value* v) {
  auto it = vals_.find(v);
  if (it != vals_.end()) return it->second;
  auto s = b_.shared_.find(v);
  if (s == b_.shared_.end()) throw std::runtime_error("the simulator lost a value");
  return s->second;
}
Lanes& Agent::set(const Value* v) { return vals_[v] = Lanes(size_t(b_.T_)); }

int64_t Agent::uniform(const Value* v, const Mask& m) {
  const Lanes& l = get(v);
  int64_t x = 0;
  bool first = true;
  for (int t = 0; t < b_.T_; ++t) {
    if (!m[size_t(t)]) continue;
    int64_t y = asI(l[size_t(t)], v->type());
    if (!first && y != x) throw std::runtime_error("a loop bound differs between the active threads");
    x = y;
    first = false;
  }
  return x;
}

void Agent::runBlock(const ir::Block& blk, const Mask& m) {
  for (const auto& op : blk.operations())
    if (!op->is("scf.yield")) exec(*op, m);
}

void Agent::exec(const Operation& op, const Mask& m) {
  const std::string& n = op.name();
  checkNoResultInFlight(op);
  const Type& rt = op.numResults() ? op.result()->type() : Type();
  int T = b_.T_;
  if (n == "arith.constant") {
    const Attribute& a = *op.attr("value");
    uint64_t bits = rt.isScalar(ScalarType::F32) ? fromF(float(a.asNumber()))
                    : fromI(a.isBool() ? a.asBool() : a.isInt() ? a.asInt() : int64_t(a.asNumber()), rt);
    set(op.result()) = Lanes(size_t(T), bits);
  } else if (n == "arith.cmpi") {
    const Type& ot = op.operand(0)->type();
    std::string p = op.stringAttr("pred");
    Lanes r = Lanes(size_t(T));
    for (int t = 0; t < T; ++t)
      r[size_t(t)] = simCmpi(p, asI(get(op.operand(0))[size_t(t)], ot), asI(get(op.operand(1))[size_t(t)], ot));
    set(op.result()) = r;
  } else if (n == "arith.select") {
    Lanes r = Lanes(size_t(T));
    for (int t = 0; t < T; ++t)
      r[size_t(t)] = get(op.operand(0))[size_t(t)] ? get(op.operand(1))[size_t(t)] : get(op.operand(2))[size_t(t)];
    set(op.result()) = r;
  } else if (n == "arith.cast") {
    const Type& from = op.operand(0)->type();
    Lanes r = Lanes(size_t(T));
    for (int t = 0; t < T; ++t) r[size_t(t)] = simCast(from, rt, get(op.operand(0))[size_t(t)]);
    set(op.result()) = r;
  } else if (n.rfind("arith.", 0) == 0 && n.back() == 'i') {
    Lanes r = Lanes(size_t(T));
    for (int t = 0; t < T; ++t) {
      int64_t x = asI(get(op.operand(0))[size_t(t)], rt), y = asI(get(op.operand(1))[size_t(t)], rt);
      r[size_t(t)] = fromI(simIntOp(n, x, y, rt), rt);
    }
    set(op.result()) = r;
  } else if (n == "arith.cmpf") {
    Lanes r = Lanes(size_t(T));
    for (int t = 0; t < T; ++t)
      r[size_t(t)] = simCmpf(op.stringAttr("pred"), asF(get(op.operand(0))[size_t(t)]), asF(get(op.operand(1))[size_t(t)]));
    set(op.result()) = r;
  } else if ((n.rfind("arith.", 0) == 0 && n.back() == 'f' && n != "arith.fmaf") || n.rfind("math.", 0) == 0) {
    // split-K's sums; the epilogue's scales, biases and functions (exact: kern_sim_math.h)
    Lanes r = Lanes(size_t(T));
    for (int t = 0; t < T; ++t) {
      float x = asF(get(op.operand(0))[size_t(t)]);
      float y = op.numOperands() > 1 ? asF(get(op.operand(1))[size_t(t)]) : 0.0f;
      r[size_t(t)] = fromF(simFloatOp(n, x, y));
    }
    set(op.result()) = r;
  } else if (n == "arith.fmaf") {  // block scales: a K step's sums times its factor, added once rounded
    Lanes r = Lanes(size_t(T));
    for (int t = 0; t < T; ++t)
      r[size_t(t)] = fromF(std::fma(asF(get(op.operand(0))[size_t(t)]), asF(get(op.operand(1))[size_t(t)]),
                                    asF(get(op.operand(2))[size_t(t)])));
    set(op.result()) = r;
  } else if (n == "scf.for") {
    int64_t lb = uniform(op.operand(0), m), ub = uniform(op.operand(1), m), step = uniform(op.operand(2), m);
    const ir::Block& body = op.body();
    std::vector<Lanes> carried;
    std::vector<const Value*> from, args;  // where the carried values came from; the body's arguments
    for (unsigned i = 3; i < op.numOperands(); ++i) {
      carried.push_back(get(op.operand(i)));
      from.push_back(op.operand(i));
      args.push_back(body.argument(i - 2));
    }
    for (int64_t iv = lb; iv < ub; iv += step) {
      vals_[body.argument(0)] = Lanes(size_t(T), fromI(iv, body.argument(0)->type()));
      for (size_t i = 0; i < carried.size(); ++i) vals_[body.argument(unsigned(i + 1))] = carried[i];
      carryInFlight(from, args);
      runBlock(body, m);
      for (size_t i = 0; i < carried.size(); ++i) {
        carried[i] = get(body.back()->operand(unsigned(i)));
        from[i] = body.back()->operand(unsigned(i));
      }
    }
    std::vector<const Value*> results;
    for (size_t i = 0; i < carried.size(); ++i) {
      vals_[op.result(unsigned(i))] = carried[i];
      results.push_back(op.result(unsigned(i)));
    }
    carryInFlight(from, results);
  } else if (n == "scf.if") {
    Mask thenM(m), elseM(m);
    bool anyThen = false, anyElse = false;
    for (int t = 0; t < T; ++t) {
      bool c = get(op.operand(0))[size_t(t)] & 1;
      thenM[size_t(t)] = m[size_t(t)] && c;
      elseM[size_t(t)] = m[size_t(t)] && !c;
      anyThen |= bool(thenM[size_t(t)]);
      anyElse |= bool(elseM[size_t(t)]);
    }
    if (anyThen) runBlock(op.body(0), thenM);
    if (anyElse) runBlock(op.body(1), elseM);
    // Results (the expanded tile scheduler's unit): each thread's from the branch it took. A wgmma
    // result still in flight is not passed through a branch.
    for (unsigned i = 0; i < op.numResults(); ++i) {
      const Value* from[2] = {op.body(0).back()->operand(i), op.body(1).back()->operand(i)};
      if (inFlight_.count(from[0]) || inFlight_.count(from[1]))
        throw std::runtime_error("the simulator does not pass a wgmma result in flight through scf.if");
      Lanes r = Lanes(size_t(T));
      for (int t = 0; t < T; ++t)
        if (m[size_t(t)]) r[size_t(t)] = get(from[thenM[size_t(t)] ? 0 : 1])[size_t(t)];
      vals_[op.result(i)] = r;
    }
  } else if (n.rfind("kern.", 0) == 0) {
    kernOp(op, m);
  } else {
    throw std::runtime_error("the simulator does not run '" + n + "'");
  }
}

void Agent::kernOp(const Operation& op, const Mask& m) {
  const std::string& n = op.name();
  int T = b_.T_;
  auto lanes = [&](const std::function<void(int)>& f) {
    for (int t = 0; t < T; ++t)
      if (m[size_t(t)]) f(t);
  };
  auto barrier = [&](int t) -> Barrier& {
    return b_.barriers_[uint32_t(get(op.operand(0))[size_t(t)] + 8 * get(op.operand(1))[size_t(t)])];
  };
  if (n == "kern.thread_id" || n == "kern.lane_id" || n == "kern.warp_id" || n == "kern.block_id") {
    Lanes& r = set(op.result());
    for (int t = 0; t < T; ++t)
      r[size_t(t)] = n == "kern.thread_id" ? t : n == "kern.lane_id" ? t % 32 : n == "kern.warp_id" ? t / 32
                     : op.stringAttr("dim") == "x" ? b_.bx_ : 0;
  } else if (n == "kern.smem_alloc" || n == "kern.mbarrier_alloc") {
    set(op.result()) = Lanes(size_t(T), uint64_t(op.intAttr("offset", 0)));
  } else if (n == "kern.undef") {
    // Not defined: a NaN (or, for integers, a pattern no index takes), so a result that depends on it shows.
    bool f = op.result()->type().isScalar(ScalarType::F32);
    set(op.result()) = Lanes(size_t(T), f ? uint64_t(0x7fc00000u) : uint64_t(0xdeadbeefu));
  } else if (n == "kern.smem_offset") {
    auto l = *kern::smemLayout(op.operand(0)->type());
    Lanes& r = set(op.result());
    for (int t = 0; t < T; ++t) {
      int64_t row = asI(get(op.operand(1))[size_t(t)], types::i32()), col = asI(get(op.operand(2))[size_t(t)], types::i32());
      r[size_t(t)] = uint64_t(l.swizzle.apply(row * l.rowBytes() + col * l.elemBytes()));
    }
  } else if (n == "kern.barrier") {
    for (int t = 0; t < T; ++t)
      if (!m[size_t(t)]) throw std::runtime_error("kern.barrier with inactive threads");
  } else if (n == "kern.fence" || n == "kern.setmaxnreg" || n == "kern.wgmma_fence" || n == "kern.prefetch_tensormap" ||
             n == "kern.griddep_wait" || n == "kern.griddep_launch_dependents") {  // one grid: nothing to wait for
  } else if (n == "kern.role") {
    auto wg = op.intsAttr("warpgroups");
    Mask inner(m);
    for (int t = 0; t < T; ++t) inner[size_t(t)] = m[size_t(t)] && t >= wg[0] * 128 && t < (wg[0] + wg[1]) * 128;
    runBlock(op.body(), inner);
  } else if (n == "kern.tile_loop") {
    tileLoop(op, m);
  } else if (n == "kern.cluster_rank") {
    set(op.result()) = Lanes(size_t(T), uint64_t(b_.rank_));
  } else if (n == "kern.grid_dim") {
    set(op.result()) = Lanes(size_t(T), op.stringAttr("dim") == "x" ? uint64_t(b_.l_.blocks) : 1);
  } else if (n == "kern.cluster_id" || n == "kern.cluster_count") {
    uint32_t cs = uint32_t(b_.cluster_.clusterSize());
    set(op.result()) = Lanes(size_t(T), n == "kern.cluster_id" ? b_.bx_ / cs : b_.l_.blocks / cs);
  } else if (n == "kern.assume_range") {
    // The promise is checked: a value outside it would let strength-reduce miscompile.
    const Lanes& x = get(op.operand(0));
    lanes([&](int t) {
      int64_t v = asI(x[size_t(t)], types::i32());
      if (v < op.intAttr("lo") || v > op.intAttr("hi"))
        throw std::runtime_error("kern.assume_range promised [" + std::to_string(op.intAttr("lo")) + ", " +
                                 std::to_string(op.intAttr("hi")) + "], got " + std::to_string(v));
    });
    set(op.result()) = x;
  } else if (n == "kern.mbarrier_init") {
    lanes([&](int t) {
      Barrier& b = barrier(t);
      b = Barrier{op.intAttr("count", 1), op.intAttr("count", 1), 0, 0};
    });
  } else if (n == "kern.mbarrier_arrive" || n == "kern.mbarrier_arrive_expect_tx") {
    lanes([&](int t) {
      Barrier& b = barrier(t);
      if (b.count == 0) throw std::runtime_error("arrive on an uninitialized mbarrier");
      b.tx += op.intAttr("bytes", 0);
      --b.pending;
      b.maybeComplete();
      ++b_.progress_;
    });
    // An arrival that expects bytes completes no phase before its copies land, so the arriving
    // agent goes on to issue them: handing over here would let a consumer run past its next
    // release and wgmma wait before a refill it made possible lands, hiding a release made while
    // a group may still read the stage.
    if (n == "kern.mbarrier_arrive" || op.intAttr("bytes", 0) == 0) b_.handOver(index_);
  } else if (n == "kern.mbarrier_arrive_remote") {
    bool release = op.stringAttr("scope") == "cluster";
    lanes([&](int t) {
      BlockSim& peer = b_.peer(asI(get(op.operand(2))[size_t(t)], types::i32()));
      uint32_t addr = uint32_t(get(op.operand(0))[size_t(t)] + 8 * get(op.operand(1))[size_t(t)]);
      Barrier& b = peer.barriers_[addr];
      if (b.count == 0) throw std::runtime_error("remote arrive on an uninitialized mbarrier");
      if (release) {
        // A cluster-scope release: this block's writes (and reads) so far are published to the
        // peer's waits on this barrier.
        b_.releases_.push_back(++b_.cluster_.epoch_);
        peer.barrierReleases_[addr].push_back({&b_, b_.releases_.back()});
      }
      --b.pending;
      b.maybeComplete();
      ++b_.progress_;
    });
    b_.handOver(index_);
  } else if (n == "kern.mbarrier_wait") {
    lanes([&](int t) {
      Barrier& b = barrier(t);
      uint32_t addr = uint32_t(get(op.operand(0))[size_t(t)] + 8 * get(op.operand(1))[size_t(t)]);
      int64_t parity = int64_t(get(op.operand(2))[size_t(t)] & 1);
      // The phase of parity P before the current one has completed iff the current phase's parity is not P.
      b_.waitUntil(index_, [&] { return (b.phase & 1) != parity; });
      seePhases(addr, b.phase);
      // At cluster scope the wait acquires the releases that arrived on the barrier.
      if (op.stringAttr("scope") == "cluster")
        for (const auto& [blk, epoch] : b_.barrierReleases_[addr]) b_.acquired_[blk] = std::max(b_.acquired_[blk], epoch);
    });
  } else if (n == "kern.tma_load") {
    tmaLoad(op, m);
  } else if (n == "kern.wgmma_desc") {
    wgmmaDesc(op, m);
  } else if (n == "kern.wgmma") {
    wgmma(op, m);
  } else if (n == "kern.wgmma_commit") {
    for (auto& [wg, reads] : open_) groups_[wg].push_back(std::move(reads));
    open_.clear();
    for (auto& [wg, group] : openResults_) resultGroups_[wg].push_back(std::move(group));
    openResults_.clear();
  } else if (n == "kern.wgmma_wait") {
    wgmmaWait(op, m);
  } else if (n == "kern.st_shared") {
    stShared(op, m);
  } else if (n == "kern.st_shared_v4") {
    stSharedV4(op, m);
  } else if (n == "kern.ld_shared") {
    ldShared(op, m);
  } else if (n == "kern.ld_shared_remote_v4") {
    ldSharedRemoteV4(op, m);
  } else if (n == "kern.stmatrix") {
    stmatrix(op, m);
  } else if (n == "kern.tma_store") {
    tmaStore(op, m);
  } else if (n == "kern.bulk_commit") {
    // Stores write global memory at issue; their groups guard only their source in shared memory.
    bulkCommit(m);
  } else if (n == "kern.bulk_wait") {
    bulkWait(op, m);
  } else if (n == "kern.named_barrier") {
    int64_t threads = op.intAttr("threads", 0), active = 0;
    for (int t = 0; t < T; ++t) active += m[size_t(t)] ? 1 : 0;
    if (threads > active && active > 0 && index_ >= 0) {
      // Across warpgroups (agents): wait until `threads` threads of the block have arrived at
      // this barrier id; the agents that came first block meanwhile.
      BlockSim::NamedBarrier& nb = b_.namedBarriers_[uniform(op.operand(0), m)];
      if (nb.arrived != 0 && nb.threads != threads)
        throw std::runtime_error("a named barrier used with two thread counts at once");
      // PTX ISA, "barrier": bar.sync is barrier.sync.aligned, whose participants all execute the
      // same instruction (compute-sanitizer's synccheck reports the others as divergent threads).
      if (nb.arrived != 0 && nb.first != &op)
        throw std::runtime_error("a named barrier (bar.sync, aligned) reached from two different instructions in one "
                                 "generation");
      if (nb.arrived == 0) nb.first = &op;
      nb.threads = threads;
      nb.arrived += active;
      ++b_.progress_;
      if (nb.arrived == threads) {
        nb.arrived = 0;
        ++nb.generation;
      } else {
        uint64_t generation = nb.generation;
        b_.waitUntil(index_, [&] { return nb.generation != generation; });
      }
    } else if (active % threads != 0) {
      throw std::runtime_error("a named barrier short of its threads");
    }
  } else if (n == "kern.ptr_add") {
    int eb = bitWidth(op.operand(0)->type().elem()) / 8;
    Lanes& r = set(op.result());
    for (int t = 0; t < T; ++t)
      r[size_t(t)] = get(op.operand(0))[size_t(t)] + uint64_t(int64_t(get(op.operand(1))[size_t(t)]) * eb);
  } else if (n == "kern.cvt_pack") {
    // A pair, or (an output stored one element at a time) a single element.
    Lanes& r = set(op.result());
    for (int t = 0; t < T; ++t) {
      std::vector<float> v;
      for (unsigned i = 0; i < op.numOperands(); ++i) v.push_back(asF(get(op.operand(i))[size_t(t)]));
      r[size_t(t)] = simPack(op.result()->type().elem(), v);
    }
  } else if (n == "kern.cvt_unpack") {
    std::vector<Lanes*> out;
    for (unsigned i = 0; i < op.numResults(); ++i) out.push_back(&set(op.result(i)));
    for (int t = 0; t < T; ++t) {
      auto v = simUnpack(op.operand(0)->type().elem(), get(op.operand(0))[size_t(t)], out.size());
      for (size_t i = 0; i < out.size(); ++i) (*out[i])[size_t(t)] = fromF(v[i]);
    }
  } else if (n == "kern.prefetch_global") {
    lanes([&](int t) {
      if (!(get(op.operand(1))[size_t(t)] & 1)) return;
      uint64_t addr = get(op.operand(0))[size_t(t)];
      b_.mem_.ptr(addr, 1);  // throws for an address outside every buffer
      if (b_.l_.prefetchedLines) b_.l_.prefetchedLines->at(b_.bx_).insert(addr / 128);
    });
  } else if (n == "kern.ld_global") {
    const Type& vt = op.result()->type();  // elements, or 32-bit words of packed ones
    size_t each = kern::isFrag(vt) ? 4 : size_t(bitWidth(vt.elem()) / 8), count = op.numResults();
    uint64_t other = op.attr("other") ? fromF(float(op.attr("other")->asNumber())) : 0;
    for (unsigned i = 0; i < count; ++i) {
      Lanes& r = set(op.result(i));
      lanes([&](int t) {
        r[size_t(t)] = other;
        if (!(get(op.operand(1))[size_t(t)] & 1)) return;
        uint64_t addr = get(op.operand(0))[size_t(t)];
        if (addr % (each * count) != 0) throw std::runtime_error("a vector ld.global of a misaligned address");
        auto w = b_.cluster_.writes_.find((addr + i * each) & ~uint64_t(3));
        if (w != b_.cluster_.writes_.end() && w->second.block != &b_)
          b_.requireAcquired(*w->second.block, w->second.epoch, "a block read global memory another block wrote");
        uint64_t v = 0;
        std::memcpy(&v, b_.mem_.ptr(addr + i * each, each), each);
        r[size_t(t)] = v;
        if (b_.l_.loadedLines) b_.l_.loadedLines->at(b_.bx_).insert((addr + i * each) / 128);
      });
    }
  } else if (n == "kern.red_release") {
    // Split-K's flags (kern_ops.h): the add publishes this block's writes (through the barrier
    // before it, the other threads' too); the others may now see it.
    b_.releases_.push_back(++b_.cluster_.epoch_);
    lanes([&](int t) {
      int32_t x;
      b_.cluster_.flagReleases_[get(op.operand(0))[size_t(t)]].push_back({&b_, b_.releases_.back()});
      uint8_t* p = b_.mem_.ptr(get(op.operand(0))[size_t(t)], 4);
      std::memcpy(&x, p, 4);
      x += int32_t(get(op.operand(1))[size_t(t)]);
      std::memcpy(p, &x, 4);
      ++b_.progress_;
    });
    b_.handOver(index_);
  } else if (n == "kern.spin_wait") {
    lanes([&](int t) {
      uint64_t addr = get(op.operand(0))[size_t(t)];
      int32_t target = int32_t(get(op.operand(1))[size_t(t)]);
      b_.waitUntil(index_, [&] {
        int32_t x;
        std::memcpy(&x, b_.mem_.ptr(addr, 4), 4);
        return x >= target;
      });
      // Acquires the releases that made the flag's count.
      for (const auto& [blk, epoch] : b_.cluster_.flagReleases_[addr])
        b_.acquired_[blk] = std::max(b_.acquired_[blk], epoch);
    });
  } else if (n == "kern.st_global") {
    size_t each = kern::isFrag(op.operand(2)->type()) ? 4 : size_t(bitWidth(op.operand(2)->type().elem()) / 8);
    size_t count = op.numOperands() - 2;
    lanes([&](int t) {
      if (!(get(op.operand(1))[size_t(t)] & 1)) return;
      if (get(op.operand(0))[size_t(t)] % (each * count) != 0)
        throw std::runtime_error("a vector st.global of a misaligned address");
      for (unsigned i = 2; i < op.numOperands(); ++i) {
        uint64_t v = get(op.operand(i))[size_t(t)], addr = get(op.operand(0))[size_t(t)] + (i - 2) * each;
        std::memcpy(b_.mem_.ptr(addr, each), &v, each);
        b_.cluster_.writes_[addr & ~uint64_t(3)] = {&b_, ++b_.cluster_.epoch_};
      }
    });
  } else {
    throw std::runtime_error("the simulator does not run '" + n + "'");
  }
}

}  // namespace wssim
}  // namespace kiln::testing
