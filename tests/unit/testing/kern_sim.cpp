// The kern IR simulator (contract in kern_sim.h).
#include "tests/unit/testing/kern_sim.h"
#include "tests/unit/testing/kern_sim_math.h"
#include "tests/unit/testing/sim_values.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <deque>
#include <functional>
#include <stdexcept>
#include <unordered_map>

#include "dialects/kern/kern_ops.h"
#include "kiln/float_formats.h"
#include "target/swizzle.h"

namespace kiln::testing {
using namespace ir;

uint64_t GlobalMemory::add(std::vector<uint8_t> bytes) {
  uint64_t base = next_;
  next_ += (uint64_t(bytes.size()) + 4096) / 4096 * 4096 + (1ull << 20);
  buffers_[base] = std::move(bytes);
  return base;
}

uint8_t* GlobalMemory::ptr(uint64_t addr, size_t bytes) {
  auto it = buffers_.upper_bound(addr);
  if (it == buffers_.begin()) throw std::runtime_error("global access below every buffer");
  --it;
  if (addr + bytes > it->first + it->second.size())
    throw std::runtime_error("global access out of bounds at offset " + std::to_string(addr - it->first));
  return it->second.data() + (addr - it->first);
}

namespace {

using Lanes = std::vector<uint64_t>;

using namespace simvalues;

class Block {
 public:
  Block(const SimLaunch& l, GlobalMemory& mem, uint32_t bx, uint32_t by, uint32_t bz)
      : l_(l), mem_(mem), T_(int(l.kernel->intAttr("threads", 32))),
        smem_(size_t(l.kernel->intAttr("smem_bytes", 0)), 0xFF),  // unwritten shared memory reads as NaN
        groups_(size_t(T_)), open_(size_t(T_)), readEpoch_(smem_.size(), -1), readWarps_(smem_.size(), 0),
        inFlight_(smem_.size(), 0), landedEpoch_(smem_.size(), -1), writeEpoch_(smem_.size(), -1),
        writeWarps_(smem_.size(), 0) {
    bid_[0] = bx;
    bid_[1] = by;
    bid_[2] = bz;
  }

  void run() {
    const ir::Block& body = l_.kernel->body();
    for (unsigned i = 0; i < body.numArguments(); ++i) vals_[body.argument(i)] = Lanes(size_t(T_), l_.args.at(i));
    runBlock(body);
  }

 private:
  struct Copy {
    uint32_t dst;
    uint64_t src;
    uint32_t bytes;
    uint32_t size = 16;  // cp-size: the bytes written (those past `bytes` are zeros)
  };

  // Cross-warp shared-memory hazards, which lockstep execution would otherwise hide. Time is
  // counted in barrier epochs (kern.barrier ends one). Per byte: the epoch of the latest ldmatrix
  // read and the warps that read it then, the cp.async writes in flight (issued, not yet retired by
  // the issuer's cp.async.wait_group) and the epoch in which the latest one was retired. On real
  // hardware warps only meet at barriers, so:
  //   * a cp.async may not write a byte another warp read in the current epoch (the reader may not
  //     have read it yet: write after read);
  //   * an ldmatrix may not read a byte with a cp.async in flight, nor one whose copy was retired in
  //     the current epoch (the issuer's wait_group orders only its own thread; others need a
  //     barrier after it: read after write).
  void hazardWrite(uint32_t dst, uint32_t size, int t) {
    uint64_t others = ~(uint64_t{1} << (t / 32));
    for (uint32_t a = dst; a < dst + size; ++a) {
      if (readEpoch_[a] == epoch_ && (readWarps_[a] & others))
        throw std::runtime_error("shared-memory race: cp.async by thread " + std::to_string(t) + " writes byte " +
                                 std::to_string(a) + ", which another warp read since the last barrier");
      ++inFlight_[a];
    }
  }
  void hazardRetire(const Copy& c) {
    for (uint32_t a = c.dst; a < c.dst + c.size; ++a) {
      --inFlight_[a];
      landedEpoch_[a] = epoch_;
    }
  }
  void hazardRead(uint32_t addr, int warp) {
    shared(addr, 16);
    for (uint32_t a = addr; a < addr + 16; ++a) {
      if (inFlight_[a] || landedEpoch_[a] == epoch_)
        throw std::runtime_error("shared-memory race: ldmatrix by warp " + std::to_string(warp) + " reads byte " +
                                 std::to_string(a) + (inFlight_[a] ? " while a cp.async into it is in flight"
                                                                   : " before a barrier after the cp.async that wrote it"));
      if (writeEpoch_[a] == epoch_ && (writeWarps_[a] & ~(uint64_t{1} << warp)))
        throw std::runtime_error("shared-memory race: ldmatrix by warp " + std::to_string(warp) + " reads byte " +
                                 std::to_string(a) + ", which another warp's st.shared wrote since the last barrier");
      if (readEpoch_[a] != epoch_) {
        readEpoch_[a] = epoch_;
        readWarps_[a] = 0;
      }
      readWarps_[a] |= uint64_t{1} << warp;
    }
  }

  const Lanes& get(const Value* v) { return vals_.at(v); }
  Lanes& set(const Value* v) { return vals_[v] = Lanes(size_t(T_)); }

  void runBlock(const ir::Block& b) {
    for (const auto& op : b.operations())
      if (!op->is("scf.yield")) exec(*op);
  }

  uint32_t stageAddress(const Operation& op, int t) {
    auto l = *kern::smemLayout(op.operand(0)->type());
    const Operation& offOp = *op.operand(2)->definingOp();
    int quads = op.is("kern.ldmatrix") ? int(op.intAttr("num", 4)) : 4;
    auto d = *displace(l.swizzle, l.rowBytes(), l.elemBytes(), op.intAttr("row", 0), op.intAttr("col", 0),
                       kern::runtimeChunks(offOp, quads, l.elemBytes()), nullptr,
                       kern::withinChunkDisplacement(op));
    uint64_t base = get(op.operand(0))[t] + get(op.operand(1))[t] * uint64_t(l.stageBytes());
    return uint32_t(base + ((get(op.operand(2))[t] ^ uint64_t(d.xorBytes)) + uint64_t(d.addBytes)));
  }
  uint8_t* shared(uint32_t addr, size_t bytes) {
    if (addr + bytes > smem_.size()) throw std::runtime_error("shared access out of bounds at " + std::to_string(addr));
    return smem_.data() + addr;
  }
  void applyCopy(const Copy& c) {
    uint8_t* dst = shared(c.dst, c.size);
    std::memset(dst, 0, c.size);
    if (c.bytes) std::memcpy(dst, mem_.ptr(c.src, c.bytes), c.bytes);
  }

  void exec(const Operation& op) {
    const std::string& n = op.name();
    const Type& rt = op.numResults() ? op.result()->type() : Type();
    if (n == "arith.constant") {
      const Attribute& a = *op.attr("value");
      uint64_t bits;
      if (rt.isScalar(ScalarType::F32)) bits = fromF(float(a.asNumber()));
      else if (rt.isScalar(ScalarType::BF16)) bits = floatToBf16Bits(float(a.asNumber()));
      else if (rt.isScalar(ScalarType::F16)) bits = floatToF16Bits(float(a.asNumber()));
      else bits = fromI(a.isBool() ? a.asBool() : a.isInt() ? a.asInt() : int64_t(a.asNumber()), rt);
      set(op.result()) = Lanes(size_t(T_), bits);
    } else if (n == "arith.addi" || n == "arith.subi" || n == "arith.muli" || n == "arith.divsi" || n == "arith.remsi" ||
               n == "arith.divui" || n == "arith.remui" ||
               n == "arith.minsi" || n == "arith.maxsi" || n == "arith.andi" || n == "arith.ori" || n == "arith.xori" ||
               n == "arith.shli" || n == "arith.shrui") {
      const Lanes &a = get(op.operand(0)), &b = get(op.operand(1));
      Lanes& r = set(op.result());
      for (int t = 0; t < T_; ++t) r[t] = fromI(simIntOp(n, asI(a[t], rt), asI(b[t], rt), rt), rt);
    } else if (n == "arith.cmpi") {
      const Type& ot = op.operand(0)->type();
      const Lanes &a = get(op.operand(0)), &b = get(op.operand(1));
      std::string p = op.stringAttr("pred");
      Lanes& r = set(op.result());
      for (int t = 0; t < T_; ++t) r[t] = simCmpi(p, asI(a[t], ot), asI(b[t], ot));
    } else if (n == "arith.cmpf") {
      const Lanes &a = get(op.operand(0)), &b = get(op.operand(1));
      Lanes& r = set(op.result());
      for (int t = 0; t < T_; ++t) r[t] = simCmpf(op.stringAttr("pred"), asF(a[t]), asF(b[t]));
    } else if (n == "arith.select") {
      const Lanes &c = get(op.operand(0)), &a = get(op.operand(1)), &b = get(op.operand(2));
      Lanes& r = set(op.result());
      for (int t = 0; t < T_; ++t) r[t] = c[t] ? a[t] : b[t];
    } else if (n == "arith.cast") {
      const Type& from = op.operand(0)->type();
      const Lanes& a = get(op.operand(0));
      Lanes& r = set(op.result());
      for (int t = 0; t < T_; ++t) r[t] = simCast(from, rt, a[t]);
    } else if (n.rfind("arith.", 0) == 0 || n.rfind("math.", 0) == 0) {
      floatOp(op);
    } else if (n == "scf.for") {
      forLoop(op);
    } else if (n == "scf.if") {
      ifOp(op);
    } else if (n.rfind("kern.", 0) == 0) {
      kernOp(op);
    } else {
      throw std::runtime_error("the simulator does not run '" + n + "'");
    }
  }

  void floatOp(const Operation& op) {
    Lanes& r = set(op.result());
    const Lanes& a = get(op.operand(0));
    const Lanes* b = op.numOperands() > 1 ? &get(op.operand(1)) : nullptr;
    const Lanes* c = op.is("arith.fmaf") ? &get(op.operand(2)) : nullptr;  // one rounding, as fma.rn
    for (int t = 0; t < T_; ++t)
      r[t] = fromF(c ? std::fma(asF(a[t]), asF((*b)[t]), asF((*c)[t]))
                     : simFloatOp(op.name(), asF(a[t]), b ? asF((*b)[t]) : 0.f));
  }

  // Lockstep runs both arms of no branch: every thread must take the same one.
  int64_t uniform(const Value* v, const char* what) {
    const Lanes& l = get(v);
    for (int t = 1; t < T_; ++t)
      if (l[t] != l[0]) throw std::runtime_error(std::string(what) + " differs between threads");
    return asI(l[0], v->type());
  }

  // A condition that differs between threads is allowed where both arms only compute (arith.*,
  // math.*): both run, and each thread keeps its own arm's results.
  void ifOp(const Operation& op) {
    const Lanes cond = get(op.operand(0));  // a copy: running the arms may rehash vals_
    bool computes = true;
    for (unsigned a = 0; a < 2; ++a)
      for (const auto& o : op.body(a).operations())
        computes &= o->is("scf.yield") || o->name().rfind("arith.", 0) == 0 || o->name().rfind("math.", 0) == 0;
    if (!computes || std::all_of(cond.begin(), cond.end(), [&](uint64_t c) { return c == cond[0]; })) {
      const ir::Block& arm = op.body(uniform(op.operand(0), "scf.if condition") ? 0 : 1);
      runBlock(arm);
      for (unsigned i = 0; i < op.numResults(); ++i) vals_[op.result(i)] = get(arm.back()->operand(i));
      return;
    }
    std::vector<Lanes> taken;
    runBlock(op.body(0));
    for (unsigned i = 0; i < op.numResults(); ++i) taken.push_back(get(op.body(0).back()->operand(i)));
    runBlock(op.body(1));
    for (unsigned i = 0; i < op.numResults(); ++i) {
      Lanes r = get(op.body(1).back()->operand(i));
      for (int t = 0; t < T_; ++t) r[t] = cond[t] ? taken[i][t] : r[t];
      vals_[op.result(i)] = std::move(r);
    }
  }

  void forLoop(const Operation& op) {
    auto uniform = [&](const Value* v) { return this->uniform(v, "scf.for bound"); };
    int64_t lb = uniform(op.operand(0)), ub = uniform(op.operand(1)), step = uniform(op.operand(2));
    const ir::Block& body = op.body();
    std::vector<Lanes> carried;
    for (unsigned i = 3; i < op.numOperands(); ++i) carried.push_back(get(op.operand(i)));
    for (int64_t iv = lb; iv < ub; iv += step) {
      vals_[body.argument(0)] = Lanes(size_t(T_), fromI(iv, body.argument(0)->type()));
      for (size_t i = 0; i < carried.size(); ++i) vals_[body.argument(unsigned(i + 1))] = carried[i];
      runBlock(body);
      const Operation* y = body.back();
      for (size_t i = 0; i < carried.size(); ++i) carried[i] = get(y->operand(unsigned(i)));
    }
    for (size_t i = 0; i < carried.size(); ++i) vals_[op.result(unsigned(i))] = carried[i];
  }

  void kernOp(const Operation& op) {
    const std::string& n = op.name();
    if (n == "kern.thread_id" || n == "kern.lane_id" || n == "kern.warp_id" || n == "kern.block_id" ||
        n == "kern.grid_dim") {
      Lanes& r = set(op.result());
      for (int t = 0; t < T_; ++t)
        r[t] = n == "kern.thread_id" ? t : n == "kern.lane_id" ? t % 32 : n == "kern.warp_id" ? t / 32
             : n == "kern.block_id" ? bid_[op.stringAttr("dim")[0] - 'x'] : l_.grid[op.stringAttr("dim")[0] - 'x'];
    } else if (n == "kern.shfl_xor") {  // lockstep: every lane of the warp is here
      const Lanes& a = get(op.operand(0));
      Lanes& r = set(op.result());
      int off = int(op.intAttr("offset", 1));
      for (int t = 0; t < T_; ++t) r[t] = a[size_t((t & ~31) | ((t % 32) ^ off))];
    } else if (n == "kern.st_shared" || n == "kern.ld_shared") {
      sharedScalar(op);
    } else if (n == "kern.cvt_unpack") {
      size_t k = op.numResults();
      std::vector<Lanes*> out;
      for (unsigned i = 0; i < k; ++i) out.push_back(&set(op.result(i)));
      const Lanes& a = get(op.operand(0));
      for (int t = 0; t < T_; ++t) {
        auto v = simUnpack(op.operand(0)->type().elem(), a[t], k);
        for (size_t i = 0; i < k; ++i) (*out[i])[size_t(t)] = fromF(v[i]);
      }
    } else if (n == "kern.smem_alloc") {
      set(op.result()) = Lanes(size_t(T_), uint64_t(op.intAttr("offset", 0)));
    } else if (n == "kern.smem_offset") {
      auto l = *kern::smemLayout(op.operand(0)->type());
      Lanes& r = set(op.result());
      for (int t = 0; t < T_; ++t) {
        int64_t row = asI(get(op.operand(1))[t], op.operand(1)->type()), col = asI(get(op.operand(2))[t], op.operand(2)->type());
        r[t] = uint64_t(l.swizzle.apply(row * l.rowBytes() + col * l.elemBytes()));
      }
    } else if (n == "kern.ldsm_offset") {
      auto l = *kern::smemLayout(op.operand(0)->type());
      auto info = *kern::ldsmOffsetInfo(op);
      Lanes& r = set(op.result());
      for (int t = 0; t < T_; ++t) {
        int lane = t % 32, q = lane / 8;
        int64_t wr = asI(get(op.operand(1))[t], op.operand(1)->type()), wc = asI(get(op.operand(2))[t], op.operand(2)->type());
        int64_t row = wr * info.stride[0] + info.base[0] + info.quads[q][0] + lane % 8;
        int64_t col = wc * info.stride[1] + info.base[1] + info.quads[q][1];
        r[t] = uint64_t(l.swizzle.apply(row * l.rowBytes() + col * l.elemBytes()));
      }
    } else if (n == "kern.cp_async") {
      for (int t = 0; t < T_; ++t) {
        Copy c{stageAddress(op, t), get(op.operand(3))[t], uint32_t(get(op.operand(4))[t]), uint32_t(op.intAttr("bytes", 16))};
        shared(c.dst, c.size);
        // cp.async needs both addresses aligned to its size (PTX ISA, "cp.async"), and copies at most it.
        if (c.dst % c.size || c.src % c.size || c.bytes > c.size)
          throw std::runtime_error("cp.async of " + std::to_string(c.size) + " bytes by thread " + std::to_string(t) +
                                   " is misaligned or too long (shared " + std::to_string(c.dst) + ", global offset " +
                                   std::to_string(c.src % 4096) + ", src bytes " + std::to_string(c.bytes) + ")");
        hazardWrite(c.dst, c.size, t);
        if (l_.timing == CopyTiming::Early) applyCopy(c);
        open_[size_t(t)].push_back(c);
      }
    } else if (n == "kern.cp_async_commit") {
      for (int t = 0; t < T_; ++t) {
        groups_[size_t(t)].push_back(std::move(open_[size_t(t)]));
        open_[size_t(t)].clear();
      }
    } else if (n == "kern.cp_async_wait") {
      size_t pending = size_t(op.intAttr("pending", 0));
      for (int t = 0; t < T_; ++t) {
        auto& g = groups_[size_t(t)];
        while (g.size() > pending) {
          for (const Copy& c : g.front()) {
            if (l_.timing == CopyTiming::Late) applyCopy(c);
            hazardRetire(c);
          }
          g.pop_front();
        }
      }
    } else if (n == "kern.barrier") {
      // Lockstep: every thread is here; a new epoch begins.
      ++epoch_;
    } else if (n == "kern.ldmatrix") {
      ldmatrix(op);
    } else if (n == "kern.mma_sync") {
      mma(op);
    } else if (n == "kern.ptr_add") {
      int eb = bitWidth(op.operand(0)->type().elem()) / 8;
      Lanes& r = set(op.result());
      for (int t = 0; t < T_; ++t) r[t] = get(op.operand(0))[t] + uint64_t(int64_t(get(op.operand(1))[t]) * eb);
    } else if (n == "kern.prefetch_global") {
      for (int t = 0; t < T_; ++t)
        if (get(op.operand(1))[t]) mem_.ptr(get(op.operand(0))[t], 1);  // inside a buffer, as a load's
    } else if (n == "kern.ld_global") {
      const Type& vt = op.result()->type();
      size_t eb = kern::isFrag(vt) ? 4 : size_t(bitWidth(vt.elem()) / 8);
      double other = op.attr("other") ? op.attr("other")->asNumber() : 0.0;
      uint64_t fill = vt.isScalar(ScalarType::F32) ? fromF(float(other))
                      : vt.isScalar(ScalarType::BF16) ? floatToBf16Bits(float(other)) : uint64_t(other);
      std::vector<Lanes*> out;
      for (unsigned i = 0; i < op.numResults(); ++i) out.push_back(&set(op.result(i)));
      for (int t = 0; t < T_; ++t)
        for (size_t i = 0; i < out.size(); ++i) {
          uint64_t v = fill;
          if (get(op.operand(1))[t] && get(op.operand(0))[t] % (eb * out.size()))
            throw std::runtime_error("ld.global of " + std::to_string(eb * out.size()) + " bytes by thread " +
                                     std::to_string(t) + " at a misaligned address");
          if (get(op.operand(1))[t]) {
            v = 0;
            std::memcpy(&v, mem_.ptr(get(op.operand(0))[t] + i * eb, eb), eb);
          }
          (*out[i])[size_t(t)] = v;
        }
    } else if (n == "kern.st_global") {
      const Type& vt = op.operand(2)->type();
      size_t each = kern::isFrag(vt) ? 4 : size_t(bitWidth(vt.elem()) / 8);
      for (int t = 0; t < T_; ++t) {
        if (!get(op.operand(1))[t]) continue;
        if (get(op.operand(0))[t] % (each * (op.numOperands() - 2)))
          throw std::runtime_error("st.global of " + std::to_string(each * (op.numOperands() - 2)) + " bytes by thread " +
                                   std::to_string(t) + " at a misaligned address");
        for (unsigned i = 2; i < op.numOperands(); ++i) {
          uint64_t v = get(op.operand(i))[t];
          std::memcpy(mem_.ptr(get(op.operand(0))[t] + (i - 2) * each, each), &v, each);
        }
      }
    } else if (n == "kern.atom_add") {  // gemv's split-K count: threads in order, as one thread's adds
      Lanes& r = set(op.result());
      for (int t = 0; t < T_; ++t) {
        int32_t x = 0;
        if (get(op.operand(2))[t]) std::memcpy(&x, mem_.ptr(get(op.operand(0))[t], 4), 4);
        int32_t y = x + int32_t(get(op.operand(1))[t]);
        if (get(op.operand(2))[t]) std::memcpy(mem_.ptr(get(op.operand(0))[t], 4), &y, 4);
        r[t] = uint32_t(x);
      }
    } else if (n == "kern.cvt_pack") {
      Lanes& r = set(op.result());
      for (int t = 0; t < T_; ++t) {
        std::vector<float> v;
        for (unsigned i = 0; i < op.numOperands(); ++i) v.push_back(asF(get(op.operand(i))[t]));
        r[t] = simPack(op.result()->type().elem(), v);
      }
    } else {
      throw std::runtime_error("the simulator does not run '" + n + "'");
    }
  }

  // kern.st_shared / kern.ld_shared of one element, or a st_shared of two (st.shared.v2, 8 aligned
  // bytes). Between barriers, a warp may not read bytes another warp wrote, nor write bytes another
  // warp read (lockstep would hide both).
  void sharedScalar(const Operation& op) {
    bool isStore = op.is("kern.st_shared");
    const unsigned values = isStore ? op.numOperands() - 3 : 1;
    size_t eb = size_t(kern::smemLayout(op.operand(0)->type())->elemBytes()), bytes = eb * values;
    Lanes* r = isStore ? nullptr : &set(op.result());
    for (int t = 0; t < T_; ++t) {
      uint32_t addr = stageAddress(op, t);
      if (values == 2 && addr % 8 != 0)
        throw std::runtime_error("st.shared.v2 by thread " + std::to_string(t) + " at byte " + std::to_string(addr) + ", which is not 8-byte aligned");
      uint8_t* p = shared(addr, bytes);
      uint64_t warp = uint64_t{1} << (t / 32), others = ~warp;
      for (uint32_t a = addr; a < addr + bytes; ++a) {
        bool wrote = writeEpoch_[a] == epoch_ && (writeWarps_[a] & others);
        bool read = readEpoch_[a] == epoch_ && (readWarps_[a] & others);
        if (isStore ? read : wrote)
          throw std::runtime_error("shared-memory race: " + op.name() + " by thread " + std::to_string(t) + " at byte " +
                                   std::to_string(a) + ", which another warp " + (isStore ? "read" : "wrote") +
                                   " since the last barrier");
        uint64_t& warps = isStore ? writeWarps_[a] : readWarps_[a];
        int64_t& at = isStore ? writeEpoch_[a] : readEpoch_[a];
        if (at != epoch_) warps = 0;
        at = epoch_;
        warps |= warp;
      }
      if (isStore) {
        for (unsigned i = 0; i < values; ++i) std::memcpy(p + i * eb, &get(op.operand(3 + i))[t], eb);
      } else {
        uint64_t v = 0;
        std::memcpy(&v, p, eb);
        (*r)[size_t(t)] = v;
      }
    }
  }

  uint16_t half(uint32_t addr) {
    uint16_t v;
    std::memcpy(&v, shared(addr, 2), 2);
    return v;
  }

  // PTX ISA ldmatrix: lanes 8i..8i+7 give the row addresses of matrix i.
  void ldmatrix(const Operation& op) {
    int num = int(op.intAttr("num", 4));
    bool trans = op.attr("trans")->asBool();
    std::vector<Lanes*> out;
    for (unsigned i = 0; i < op.numResults(); ++i) out.push_back(&set(op.result(i)));
    for (int w = 0; w < T_ / 32; ++w) {
      uint32_t rowAddr[32];
      for (int l = 0; l < 32; ++l) rowAddr[l] = stageAddress(op, w * 32 + l);
      for (int l = 0; l < 8 * num; ++l) hazardRead(rowAddr[l], w);
      for (int i = 0; i < num; ++i)
        for (int l = 0; l < 32; ++l) {
          uint32_t word = 0;
          for (int h = 0; h < 2; ++h) {
            int r = l / 4, c = 2 * (l % 4) + h;
            uint16_t v = trans ? half(rowAddr[8 * i + c] + 2 * r) : half(rowAddr[8 * i + r] + 2 * c);
            word |= uint32_t(v) << (16 * h);
          }
          (*out[size_t(i)])[size_t(w * 32 + l)] = word;
        }
    }
  }

  void mma(const Operation& op) {
    std::vector<Lanes*> out;
    for (unsigned i = 0; i < 4; ++i) out.push_back(&set(op.result(i)));
    for (int w = 0; w < T_ / 32; ++w) {
      auto r = simMmaWarp(op, [&](unsigned operand, int lane) { return get(op.operand(operand))[size_t(w * 32 + lane)]; });
      for (int e = 0; e < 4; ++e)
        for (int l = 0; l < 32; ++l) (*out[size_t(e)])[size_t(w * 32 + l)] = r[size_t(e)][size_t(l)];
    }
  }

  const SimLaunch& l_;
  GlobalMemory& mem_;
  int T_;
  uint32_t bid_[3];
  std::vector<uint8_t> smem_;
  std::unordered_map<const Value*, Lanes> vals_;
  std::vector<std::deque<std::vector<Copy>>> groups_;
  std::vector<std::vector<Copy>> open_;
  int64_t epoch_ = 0;
  std::vector<int64_t> readEpoch_;
  std::vector<uint64_t> readWarps_;
  std::vector<uint16_t> inFlight_;
  std::vector<int64_t> landedEpoch_;
  std::vector<int64_t> writeEpoch_;  // st_shared: the epoch of the latest write and the warps that wrote then
  std::vector<uint64_t> writeWarps_;
};

}  // namespace

std::string simulate(const SimLaunch& launch, GlobalMemory& mem) {
  try {
    for (uint32_t z = 0; z < launch.grid[2]; ++z)
      for (uint32_t y = 0; y < launch.grid[1]; ++y)
        for (uint32_t i = 0; i < launch.grid[0]; ++i) Block(launch, mem, launch.reverse ? launch.grid[0] - 1 - i : i, y, z).run();
  } catch (const std::exception& e) {
    return e.what();
  }
  return {};
}

}  // namespace kiln::testing
