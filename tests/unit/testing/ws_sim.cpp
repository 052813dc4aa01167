// The warp-specialized kern IR simulator (contract in ws_sim.h).
#include "tests/unit/testing/ws_sim.h"

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

namespace {

using Lanes = std::vector<uint64_t>;
using Mask = std::vector<char>;

float asF(uint64_t b) { return std::bit_cast<float>(uint32_t(b)); }
uint64_t fromF(float f) { return std::bit_cast<uint32_t>(f); }
int64_t asI(uint64_t b, const Type& t) { return t.isScalar(ScalarType::I32) ? int64_t(int32_t(uint32_t(b))) : int64_t(b); }
uint64_t fromI(int64_t v, const Type& t) {
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
  void runRoles(const std::vector<const Operation*>& roles) {
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
            Mask m(size_t(T_), 1);
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

// The element (row, col) of a 64 x 16 (A) or 16 x N (B) operand described by `desc`, read from
// shared memory through the canonical 128B-swizzled layouts (see ws_sim.h).
uint32_t canonicalAddress(uint64_t desc, bool mnMajor, int64_t mn, int64_t k) {
  uint64_t start = (desc & 0x3FFF) << 4, lbo = ((desc >> 16) & 0x3FFF) << 4, sbo = ((desc >> 32) & 0x3FFF) << 4;
  if ((desc >> 62) != 1) throw std::runtime_error("wgmma descriptor without the 128B swizzle mode");
  uint64_t off = mnMajor ? uint64_t(mn % 64) * 2 + uint64_t(mn / 64) * lbo + uint64_t(k % 8) * 128 + uint64_t(k / 8) * sbo
                         : uint64_t(mn % 8) * 128 + uint64_t(mn / 8) * sbo + uint64_t(k) * 2;
  uint64_t a = start + off;
  return uint32_t(a ^ (((a >> 7) & 7) << 4));
}

void Agent::wgmma(const Operation& op, const Mask& m) {
  int T = b_.T_;
  auto shape = op.intsAttr("shape");
  int N = int(shape[1]), nacc = N / 2;
  bool transB = op.attr("trans_b")->asBool();
  std::vector<Lanes> out(static_cast<size_t>(nacc), Lanes(static_cast<size_t>(T)));
  for (int wg = 0; wg < T / 128; ++wg) {
    int active = 0;
    for (int t = wg * 128; t < wg * 128 + 128; ++t) active += m[size_t(t)] ? 1 : 0;
    if (active == 0) continue;
    if (active != 128) throw std::runtime_error("wgmma with part of a warpgroup");
    int t0 = wg * 128;
    uint64_t da = get(op.operand(1))[size_t(t0)], db = get(op.operand(2))[size_t(t0)];
    for (int t = t0; t < t0 + 128; ++t)
      if (get(op.operand(1))[size_t(t)] != da || get(op.operand(2))[size_t(t)] != db)
        throw std::runtime_error("wgmma descriptors differ within a warpgroup");
    auto read = [&](uint32_t addr) {
      uint16_t v;
      std::memcpy(&v, b_.shared(addr, 2), 2);
      open_[wg].push_back({addr, v});
      return double(bf16BitsToFloat(v));
    };
    std::vector<double> A(64 * 16), B(16 * size_t(N));
    for (int r = 0; r < 64; ++r)
      for (int k = 0; k < 16; ++k) A[size_t(r * 16 + k)] = read(canonicalAddress(da, false, r, k));
    for (int k = 0; k < 16; ++k)
      for (int c = 0; c < N; ++c) B[size_t(k * N + c)] = read(canonicalAddress(db, transB, c, k));
    for (int t = t0; t < t0 + 128; ++t) {
      int w = (t - t0) / 32, l = t % 32;
      bool scale = get(op.operand(0))[size_t(t)] & 1;
      for (int i = 0; i < nacc; ++i) {
        int j = i / 4, e = i % 4;
        int row = 16 * w + l / 4 + (e >= 2 ? 8 : 0), col = 8 * j + 2 * (l % 4) + (e & 1);
        double acc = scale ? asF(get(op.operand(unsigned(3 + i)))[size_t(t)]) : 0.0;
        for (int k = 0; k < 16; ++k) acc += A[size_t(row * 16 + k)] * B[size_t(k * N + col)];
        out[size_t(i)][size_t(t)] = fromF(float(acc));
      }
    }
  }
  for (int i = 0; i < nacc; ++i) vals_[op.result(unsigned(i))] = out[size_t(i)];
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
    auto l = *kern::smemLayout(op.operand(1)->type());
    lanes([&](int t) {
      const runtime::TensorMapDesc& d = b_.l_.maps.at(size_t(get(op.operand(0))[size_t(t)]));
      int eb = bitWidth(d.dtype) / 8;
      size_t rank = d.globalDims.size();
      std::vector<int64_t> c;
      for (size_t i = 0; i < rank; ++i) c.push_back(asI(get(op.operand(unsigned(5 + i)))[size_t(t)], types::i32()));
      uint64_t dst = get(op.operand(1))[size_t(t)] + get(op.operand(2))[size_t(t)] * uint64_t(l.stageBytes()) +
                     uint64_t(op.intAttr("row", 0)) * uint64_t(l.rowBytes());
      int64_t rows = 1;
      for (size_t i = 1; i < rank; ++i) rows *= d.boxDims[i];
      for (int64_t row = 0; row < rows; ++row) {
        int64_t rem = row, addr = 0;
        bool in = true;
        std::vector<int64_t> idx(rank);
        for (size_t i = 1; i < rank; ++i) {
          idx[i] = c[i] + rem % d.boxDims[i];
          rem /= d.boxDims[i];
          in = in && idx[i] >= 0 && uint64_t(idx[i]) < d.globalDims[i];
          addr += idx[i] * int64_t(d.globalStrides[i - 1]);
        }
        for (int64_t e = 0; e < int64_t(d.boxDims[0]); ++e) {
          int64_t x = c[0] + e;
          uint16_t v = 0;
          if (in && x >= 0 && uint64_t(x) < d.globalDims[0])
            std::memcpy(&v, b_.mem_.ptr(d.globalAddress + uint64_t(addr + x * eb), size_t(eb)), size_t(eb));
          uint64_t a = dst + uint64_t(row) * uint64_t(d.boxDims[0] * eb) + uint64_t(e * eb);
          a ^= ((a >> 7) & 7) << 4;
          std::memcpy(b_.shared(a, 2), &v, 2);
        }
      }
      Barrier& bar = b_.barriers_[uint32_t(get(op.operand(3))[size_t(t)] + 8 * get(op.operand(4))[size_t(t)])];
      bar.tx -= rows * d.boxDims[0] * eb;
      bar.maybeComplete();
      ++b_.progress_;
    });
  } else if (n == "kern.wgmma_desc") {
    auto l = *kern::smemLayout(op.operand(0)->type());
    Lanes& r = set(op.result());
    lanes([&](int t) {
      uint64_t addr = get(op.operand(0))[size_t(t)] + get(op.operand(1))[size_t(t)] * uint64_t(l.stageBytes()) +
                      (get(op.operand(2))[size_t(t)] + uint64_t(op.intAttr("row", 0))) * uint64_t(l.rowBytes()) +
                      uint64_t(op.intAttr("col", 0) * l.elemBytes());
      auto enc = [](uint64_t x) { return (x & 0x3FFFF) >> 4; };
      r[size_t(t)] = enc(addr) | enc(uint64_t(op.intAttr("lbo", 0))) << 16 | enc(uint64_t(op.intAttr("sbo", 0))) << 32 |
                     uint64_t(1) << 62;
    });
  } else if (n == "kern.wgmma") {
    wgmma(op, m);
  } else if (n == "kern.wgmma_commit") {
    for (auto& [wg, reads] : open_) groups_[wg].push_back(std::move(reads));
    open_.clear();
  } else if (n == "kern.wgmma_wait") {
    size_t pending = size_t(op.intAttr("pending", 0));
    for (auto& [wg, gs] : groups_)
      while (gs.size() > pending) {
        for (const WgmmaRead& r : gs.front()) {
          uint16_t now;
          std::memcpy(&now, b_.shared(r.addr, 2), 2);
          if (now != r.value)
            throw std::runtime_error("hazard: shared memory a wgmma read changed before its group was waited for");
        }
        gs.erase(gs.begin());
      }
  } else if (n == "kern.st_shared") {
    auto l = *kern::smemLayout(op.operand(0)->type());
    size_t bytes = kern::isFrag(op.operand(4)->type()) ? 4 : size_t(l.elemBytes());
    lanes([&](int t) {
      int64_t row = asI(get(op.operand(2))[size_t(t)], types::i32()), col = asI(get(op.operand(3))[size_t(t)], types::i32());
      uint64_t off = uint64_t(row * l.rowBytes() + col * l.elemBytes());
      off ^= ((off >> 7) & 7) << 4;  // the 128B swizzle ([3, 4, 3]); the only one the sm90 ops use
      uint64_t a = get(op.operand(0))[size_t(t)] + get(op.operand(1))[size_t(t)] * uint64_t(l.stageBytes()) + off;
      uint64_t v = get(op.operand(4))[size_t(t)];
      std::memcpy(b_.shared(a, bytes), &v, bytes);
    });
  } else if (n == "kern.tma_store") {
    auto l = *kern::smemLayout(op.operand(1)->type());
    lanes([&](int t) {
      const runtime::TensorMapDesc& d = b_.l_.maps.at(size_t(get(op.operand(0))[size_t(t)]));
      int eb = bitWidth(d.dtype) / 8;
      size_t rank = d.globalDims.size();
      std::vector<int64_t> c;
      for (size_t i = 0; i < rank; ++i) c.push_back(asI(get(op.operand(unsigned(3 + i)))[size_t(t)], types::i32()));
      uint64_t src = get(op.operand(1))[size_t(t)] + get(op.operand(2))[size_t(t)] * uint64_t(l.stageBytes()) +
                     uint64_t(op.intAttr("row", 0)) * uint64_t(l.rowBytes());
      int64_t rows = 1;
      for (size_t i = 1; i < rank; ++i) rows *= d.boxDims[i];
      for (int64_t row = 0; row < rows; ++row) {
        int64_t rem = row, addr = 0;
        bool in = true;
        for (size_t i = 1; i < rank; ++i) {
          int64_t x = c[i] + rem % d.boxDims[i];
          rem /= d.boxDims[i];
          in = in && x >= 0 && uint64_t(x) < d.globalDims[i];
          addr += x * int64_t(d.globalStrides[i - 1]);
        }
        for (int64_t e = 0; in && e < int64_t(d.boxDims[0]); ++e) {
          int64_t x = c[0] + e;
          if (x < 0 || uint64_t(x) >= d.globalDims[0]) continue;
          uint64_t a = src + uint64_t(row) * uint64_t(d.boxDims[0] * eb) + uint64_t(e * eb);
          a ^= ((a >> 7) & 7) << 4;
          std::memcpy(b_.mem_.ptr(d.globalAddress + uint64_t(addr + x * eb), size_t(eb)), b_.shared(a, size_t(eb)),
                      size_t(eb));
        }
      }
    });
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

}  // namespace

std::string simulateWarpSpecialized(const WsLaunch& launch, GlobalMemory& mem) {
  try {
    for (uint32_t x = 0; x < launch.blocks; ++x) BlockSim(launch, mem, x).run();
  } catch (const std::exception& e) {
    return e.what();
  }
  return {};
}

}  // namespace kiln::testing
