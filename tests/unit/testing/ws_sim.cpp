// The warp-specialized kern IR simulator (contract in ws_sim.h).
#include "tests/unit/testing/ws_sim.h"
#include "tests/unit/testing/ws_sim_internal.h"

#include <bit>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <unordered_map>

#include "dialects/kern/kern_ops.h"
#include "kiln/float_formats.h"

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
    for (int t = 0; t < T; ++t) {
      int64_t x = asI(get(op.operand(0))[size_t(t)], ot), y = asI(get(op.operand(1))[size_t(t)], ot);
      r[size_t(t)] = p == "eq" ? x == y : p == "ne" ? x != y : p == "slt" ? x < y : p == "sle" ? x <= y
                     : p == "sgt" ? x > y : p == "sge" ? x >= y : uint64_t(x) < uint64_t(y);
    }
    set(op.result()) = r;
  } else if (n == "arith.select") {
    Lanes r = Lanes(size_t(T));
    for (int t = 0; t < T; ++t)
      r[size_t(t)] = get(op.operand(0))[size_t(t)] ? get(op.operand(1))[size_t(t)] : get(op.operand(2))[size_t(t)];
    set(op.result()) = r;
  } else if (n == "arith.cast") {
    const Type& from = op.operand(0)->type();
    Lanes r = Lanes(size_t(T));
    for (int t = 0; t < T; ++t) {
      uint64_t x = get(op.operand(0))[size_t(t)];
      if (from.isScalar(ScalarType::F32) && rt.isScalar(ScalarType::BF16)) r[size_t(t)] = floatToBf16Bits(asF(x));
      else if (from.isScalar(ScalarType::F32) || rt.isScalar(ScalarType::F32)) throw std::runtime_error("unsupported cast");
      else r[size_t(t)] = fromI(asI(x, from), rt);
    }
    set(op.result()) = r;
  } else if (n.rfind("arith.", 0) == 0 && n.back() == 'i') {
    Lanes r = Lanes(size_t(T));
    for (int t = 0; t < T; ++t) {
      int64_t x = asI(get(op.operand(0))[size_t(t)], rt), y = asI(get(op.operand(1))[size_t(t)], rt), z = 0;
      if (n == "arith.addi") z = x + y;
      else if (n == "arith.subi") z = x - y;
      else if (n == "arith.muli") z = x * y;
      else if (n == "arith.divsi") z = y ? x / y : 0;
      else if (n == "arith.remsi") z = y ? x % y : 0;
      else if (n == "arith.minsi") z = std::min(x, y);
      else if (n == "arith.andi") z = x & y;
      else if (n == "arith.ori") z = x | y;
      else if (n == "arith.xori") z = x ^ y;
      else throw std::runtime_error("the simulator does not run '" + n + "'");
      r[size_t(t)] = fromI(z, rt);
    }
    set(op.result()) = r;
  } else if (n == "scf.for") {
    int64_t lb = uniform(op.operand(0), m), ub = uniform(op.operand(1), m), step = uniform(op.operand(2), m);
    const ir::Block& body = op.body();
    std::vector<Lanes> carried;
    for (unsigned i = 3; i < op.numOperands(); ++i) carried.push_back(get(op.operand(i)));
    for (int64_t iv = lb; iv < ub; iv += step) {
      vals_[body.argument(0)] = Lanes(size_t(T), fromI(iv, body.argument(0)->type()));
      for (size_t i = 0; i < carried.size(); ++i) vals_[body.argument(unsigned(i + 1))] = carried[i];
      runBlock(body, m);
      for (size_t i = 0; i < carried.size(); ++i) carried[i] = get(body.back()->operand(unsigned(i)));
    }
    for (size_t i = 0; i < carried.size(); ++i) vals_[op.result(unsigned(i))] = carried[i];
  } else if (n == "scf.if") {
    if (op.numResults()) throw std::runtime_error("the simulator runs scf.if without results only");
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
  } else if (n == "kern.barrier") {
    for (int t = 0; t < T; ++t)
      if (!m[size_t(t)]) throw std::runtime_error("kern.barrier with inactive threads");
  } else if (n == "kern.fence" || n == "kern.setmaxnreg" || n == "kern.wgmma_fence") {
  } else if (n == "kern.role") {
    auto wg = op.intsAttr("warpgroups");
    Mask inner(m);
    for (int t = 0; t < T; ++t) inner[size_t(t)] = m[size_t(t)] && t >= wg[0] * 128 && t < (wg[0] + wg[1]) * 128;
    runBlock(op.body(), inner);
  } else if (n == "kern.tile_loop") {
    auto tile = op.intsAttr("tile");
    int64_t tm = (uniform(op.operand(0), m) + tile[0] - 1) / tile[0];
    int64_t tn = (uniform(op.operand(1), m) + tile[1] - 1) / tile[1];
    int64_t per = tm * tn, total = per * uniform(op.operand(2), m), g = op.intAttr("group_m", 1);
    const ir::Block& body = op.body();
    for (int64_t iter = 0, tIdx = b_.bx_; tIdx < total; ++iter, tIdx += b_.l_.blocks) {
      int64_t batch = tIdx / per, r = tIdx % per, pm, pn;
      if (op.stringAttr("raster") == "grouped") {
        int64_t width = g * tn, first = (r / width) * g, size = std::min(tm - first, g), within = r % width;
        pm = first + within % size;
        pn = within / size;
      } else {
        pm = r / tn;
        pn = r % tn;
      }
      int64_t args[4] = {iter, pm * tile[0], pn * tile[1], batch};
      for (unsigned i = 0; i < 4; ++i) vals_[body.argument(i)] = Lanes(size_t(T), fromI(args[i], types::i32()));
      runBlock(body, m);
    }
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
    b_.handOver(index_);
  } else if (n == "kern.mbarrier_wait") {
    lanes([&](int t) {
      Barrier& b = barrier(t);
      int64_t parity = int64_t(get(op.operand(2))[size_t(t)] & 1);
      // The phase of parity P before the current one has completed iff the current phase's parity is not P.
      b_.waitUntil(index_, [&] { return (b.phase & 1) != parity; });
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
  } else if (n == "kern.wgmma_wait") {
    wgmmaWait(op, m);
  } else if (n == "kern.st_shared") {
    stShared(op, m);
  } else if (n == "kern.tma_store") {
    tmaStore(op, m);
  } else if (n == "kern.bulk_commit" || n == "kern.bulk_wait") {
    // Stores complete at issue here.
  } else if (n == "kern.named_barrier") {
    int64_t threads = op.intAttr("threads", 0), active = 0;
    for (int t = 0; t < T; ++t) active += m[size_t(t)] ? 1 : 0;
    if (active % threads != 0) throw std::runtime_error("a named barrier short of its threads");
  } else if (n == "kern.ptr_add") {
    int eb = bitWidth(op.operand(0)->type().elem()) / 8;
    Lanes& r = set(op.result());
    for (int t = 0; t < T; ++t)
      r[size_t(t)] = get(op.operand(0))[size_t(t)] + uint64_t(int64_t(get(op.operand(1))[size_t(t)]) * eb);
  } else if (n == "kern.cvt_pack") {
    Lanes& r = set(op.result());
    for (int t = 0; t < T; ++t)
      r[size_t(t)] = floatToBf16Bits(asF(get(op.operand(0))[size_t(t)])) |
                     uint64_t(floatToBf16Bits(asF(get(op.operand(1))[size_t(t)]))) << 16;
  } else if (n == "kern.st_global") {
    size_t each = kern::isFrag(op.operand(2)->type()) ? 4 : size_t(bitWidth(op.operand(2)->type().elem()) / 8);
    lanes([&](int t) {
      if (!(get(op.operand(1))[size_t(t)] & 1)) return;
      for (unsigned i = 2; i < op.numOperands(); ++i) {
        uint64_t v = get(op.operand(i))[size_t(t)];
        std::memcpy(b_.mem_.ptr(get(op.operand(0))[size_t(t)] + (i - 2) * each, each), &v, each);
      }
    });
  } else {
    throw std::runtime_error("the simulator does not run '" + n + "'");
  }
}

}  // namespace wssim

std::string simulateWarpSpecialized(const WsLaunch& launch, GlobalMemory& mem) {
  try {
    for (uint32_t x = 0; x < launch.blocks; ++x) wssim::BlockSim(launch, mem, x).run();
  } catch (const std::exception& e) {
    return e.what();
  }
  return {};
}

}  // namespace kiln::testing
