// The simulator's models of the asynchronous units: TMA loads and stores with the 128B swizzle, wgmma
// descriptors and the canonical shared-memory layouts, wgmma and TMA-store groups and their hazard
// checks, and swizzled shared stores (contracts in ws_sim.h).
#include <algorithm>
#include <cstring>
#include <string>

#include "dialects/kern/kern_ops.h"
#include "kiln/float_formats.h"
#include "tests/unit/testing/ws_sim_internal.h"

namespace kiln::testing::wssim {
using namespace ir;

// The element (mn, k) of a 64 x K (A) or K x N (B) operand of `eb`-byte elements described by
// `desc`, read from shared memory through the canonical 128B-swizzled layouts (see ws_sim.h).
uint32_t canonicalAddress(uint64_t desc, bool mnMajor, int64_t mn, int64_t k, int eb) {
  uint64_t start = (desc & 0x3FFF) << 4, lbo = ((desc >> 16) & 0x3FFF) << 4, sbo = ((desc >> 32) & 0x3FFF) << 4;
  if ((desc >> 62) != 1) throw std::runtime_error("wgmma descriptor without the 128B swizzle mode");
  const int64_t atom = 128 / eb;  // elements of one 128-byte row
  uint64_t off = mnMajor ? uint64_t(mn % atom * eb) + uint64_t(mn / atom) * lbo + uint64_t(k % 8) * 128 +
                               uint64_t(k / 8) * sbo
                         : uint64_t(mn % 8) * 128 + uint64_t(mn / 8) * sbo + uint64_t(k * eb);
  uint64_t a = start + off;
  return uint32_t(a ^ (((a >> 7) & 7) << 4));
}

namespace {
// An operand format of kern.wgmma: its bytes and its decoding.
struct WgmmaFormat {
  int bytes;
  double (*decode)(uint32_t);
};
WgmmaFormat wgmmaFormat(const std::string& name) {
  if (name == "bf16") return {2, [](uint32_t v) { return double(bf16BitsToFloat(uint16_t(v))); }};
  if (name == "f16") return {2, [](uint32_t v) { return double(f16BitsToFloat(uint16_t(v))); }};
  if (name == "f8e4m3") return {1, [](uint32_t v) { return double(fp8BitsToFloat(uint8_t(v), Fp8Format::E4M3)); }};
  if (name == "f8e5m2") return {1, [](uint32_t v) { return double(fp8BitsToFloat(uint8_t(v), Fp8Format::E5M2)); }};
  throw std::runtime_error("wgmma of unsupported operands ." + name);
}
}  // namespace

void Agent::wgmma(const Operation& op, const Mask& m) {
  int T = b_.T_;
  auto shape = op.intsAttr("shape");
  int N = int(shape[1]), K = int(shape[2]), nacc = N / 2;
  bool transB = op.attr("trans_b")->asBool();
  const Attribute* transAttr = op.attr("trans_a");
  bool transA = transAttr && transAttr->asBool();
  const std::string ab = op.stringAttr("ab");
  const Attribute* bAttr = op.attr("b");
  WgmmaFormat fa = wgmmaFormat(ab), fb = wgmmaFormat(bAttr ? bAttr->asString() : ab);
  if (K * fa.bytes != 32 || K * fb.bytes != 32) throw std::runtime_error("wgmma whose K is not 32 bytes of its operands");
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
    auto read = [&](uint32_t addr, const WgmmaFormat& f) {
      const BlockSim::Landing& copy = b_.landings_.at(addr);
      if (copy.barrierPlus1) {
        auto seen = phasesSeen_.find(copy.barrierPlus1 - 1);
        if (seen == phasesSeen_.end() || seen->second < copy.phases)
          throw std::runtime_error("hazard: a wgmma reads shared memory (byte offset " + std::to_string(addr) +
                                   ") before its agent saw the mbarrier phase that TMA copy completes");
      }
      uint16_t v = 0;
      std::memcpy(&v, b_.shared(addr, size_t(f.bytes)), size_t(f.bytes));
      open_[wg].push_back({addr, v, uint8_t(f.bytes)});
      return f.decode(v);
    };
    std::vector<double> A(64 * size_t(K)), B(size_t(K) * size_t(N));
    for (int r = 0; r < 64; ++r)
      for (int k = 0; k < K; ++k) A[size_t(r * K + k)] = read(canonicalAddress(da, transA, r, k, fa.bytes), fa);
    for (int k = 0; k < K; ++k)
      for (int c = 0; c < N; ++c) B[size_t(k * N + c)] = read(canonicalAddress(db, transB, c, k, fb.bytes), fb);
    for (int t = t0; t < t0 + 128; ++t) {
      int w = (t - t0) / 32, l = t % 32;
      bool scale = get(op.operand(0))[size_t(t)] & 1;
      for (int i = 0; i < nacc; ++i) {
        int j = i / 4, e = i % 4;
        int row = 16 * w + l / 4 + (e >= 2 ? 8 : 0), col = 8 * j + 2 * (l % 4) + (e & 1);
        double acc = scale ? asF(get(op.operand(unsigned(3 + i)))[size_t(t)]) : 0.0;
        for (int k = 0; k < K; ++k) acc += A[size_t(row * K + k)] * B[size_t(k * N + col)];
        out[size_t(i)][size_t(t)] = fromF(float(acc));
      }
    }
  }
  for (int i = 0; i < nacc; ++i) vals_[op.result(unsigned(i))] = out[size_t(i)];
  for (int wg = 0; wg < T / 128; ++wg)
    if (m[size_t(wg * 128)])
      for (int i = 0; i < nacc; ++i) {
        ResultGroup& g = openResults_[wg];
        if (!g.serial) g.serial = nextSerial_++;
        g.values.push_back(op.result(unsigned(i)));
        inFlight_[op.result(unsigned(i))] = g.serial;
      }
}

// Walks a TMA box with the 128B swizzle (CU_TENSOR_MAP_SWIZZLE_128B) or none: for each element,
// whether it lies inside the tensor, its global address (when inside), and its shared-memory address
// from `smem` (128B: 16-byte chunks of each 128-byte row at address bits [4:6] ^ [7:9]).
void forEachBoxElement(const runtime::TensorMapDesc& d, const std::vector<int64_t>& c, uint64_t smem,
                       const std::function<void(bool in, uint64_t global, uint64_t shared)>& f) {
  int eb = bitWidth(d.dtype) / 8;
  size_t rank = d.globalDims.size();
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
    for (int64_t e = 0; e < int64_t(d.boxDims[0]); ++e) {
      int64_t x = c[0] + e;
      bool inside = in && x >= 0 && uint64_t(x) < d.globalDims[0];
      uint64_t a = smem + uint64_t(row) * uint64_t(d.boxDims[0] * eb) + uint64_t(e * eb);
      if (d.swizzle == runtime::TmaSwizzle::B128) a ^= ((a >> 7) & 7) << 4;  // else unswizzled: rows as in the box
      f(inside, inside ? d.globalAddress + uint64_t(addr + x * eb) : 0, a);
    }
  }
}

namespace {

// What the GPU asks of a tensor copy beyond what cuTensorMapEncodeTiled checks of its map: the
// box's innermost coordinate a multiple of 16 bytes (an unaligned start stops the kernel with "an
// illegal instruction was encountered", as GPU run 12's flat scale_b map did) and its shared-memory
// side 128-byte aligned. Thrown here as the GPU faults, so a copy's legality is tested with it.
void checkTmaBox(const char* copy, const runtime::TensorMapDesc& d, const std::vector<int64_t>& c, uint64_t smem) {
  const int64_t eb = bitWidth(d.dtype) / 8;
  if (c.at(0) * eb % 16 != 0)
    throw std::runtime_error(std::string(copy) + " through map '" + d.name + "' starts its box at innermost coordinate " +
                             std::to_string(c[0]) + " (" + std::to_string(c[0] * eb) +
                             " bytes): not a multiple of 16 bytes, an illegal instruction on the GPU");
  if (smem % 128 != 0)
    throw std::runtime_error(std::string(copy) + " through map '" + d.name + "' at shared byte offset " +
                             std::to_string(smem) + ": not 128-byte aligned");
}

}  // namespace

void Agent::tmaLoad(const Operation& op, const Mask& m) {
  int T = b_.T_;
  auto lanes = [&](const std::function<void(int)>& f) {
    for (int t = 0; t < T; ++t)
      if (m[size_t(t)]) f(t);
  };
  auto l = *kern::smemLayout(op.operand(1)->type());
  // {multicast = mask}: the box lands in every block of the mask, at the same offset, and completes
  // on the barrier at the same offset in each; otherwise in this block only.
  int64_t mask = op.intAttr("multicast", 0);
  lanes([&](int t) {
    std::vector<BlockSim*> dests;
    if (!mask) dests.push_back(&b_);
    for (int r = 0; r < 16 && mask; ++r)
      if (mask >> r & 1) dests.push_back(&b_.peer(r));
    const size_t mapIndex = size_t(get(op.operand(0))[size_t(t)]);
    const runtime::TensorMapDesc& d = b_.l_.maps.at(mapIndex);
    int eb = bitWidth(d.dtype) / 8;
    size_t rank = d.globalDims.size();
    std::vector<int64_t> c;
    for (size_t i = 0; i < rank; ++i) c.push_back(asI(get(op.operand(unsigned(5 + i)))[size_t(t)], types::i32()));
    uint64_t dst = get(op.operand(1))[size_t(t)] + get(op.operand(2))[size_t(t)] * uint64_t(l.stageBytes()) +
                   uint64_t(op.intAttr("row", 0)) * uint64_t(l.rowBytes());
    int64_t elems = 1;
    for (size_t i = 0; i < rank; ++i) elems *= d.boxDims[i];
    const Attribute* stream = op.attr("stream");
    if (stream && stream->asBool() && b_.l_.evictFirstBytes && get(op.operand(op.numOperands() - 1))[size_t(t)])
      b_.l_.evictFirstBytes->at(mapIndex) += elems * eb;
    uint32_t barAddr = uint32_t(get(op.operand(3))[size_t(t)] + 8 * get(op.operand(4))[size_t(t)]);
    checkTmaBox("a TMA load", d, c, dst);
    forEachBoxElement(d, c, dst, [&](bool in, uint64_t global, uint64_t shared) {
      uint32_t v = 0;  // outside the tensor: zero fill (elements of 1, 2 or 4 bytes)
      if (in) std::memcpy(&v, b_.mem_.ptr(global, size_t(eb)), size_t(eb));
      for (BlockSim* to : dests) {
        std::memcpy(to->shared(shared, size_t(eb)), &v, size_t(eb));
        // The copy completes the barrier's current phase.
        for (int i = 0; i < eb; ++i) to->landings_[shared + uint64_t(i)] = {barAddr + 1, to->barriers_[barAddr].phase + 1};
      }
    });
    for (BlockSim* to : dests) {
      Barrier& bar = to->barriers_[barAddr];
      if (bar.count == 0) throw std::runtime_error("a TMA copy completes on an uninitialized mbarrier");
      bar.tx -= elems * eb;
      bar.maybeComplete();
    }
    ++b_.progress_;
  });
}

void Agent::seePhases(uint32_t barrier, int64_t completed) {
  int64_t& seen = phasesSeen_[barrier];
  seen = std::max(seen, completed);
}

void Agent::wgmmaDesc(const Operation& op, const Mask& m) {
  int T = b_.T_;
  auto lanes = [&](const std::function<void(int)>& f) {
    for (int t = 0; t < T; ++t)
      if (m[size_t(t)]) f(t);
  };
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
}

void Agent::wgmmaWait(const Operation& op, const Mask& m) {
  int T = b_.T_;
  auto lanes = [&](const std::function<void(int)>& f) {
    for (int t = 0; t < T; ++t)
      if (m[size_t(t)]) f(t);
  };
  size_t pending = size_t(op.intAttr("pending", 0));
  for (auto& [wg, gs] : groups_)
    while (gs.size() > pending) {
      for (const WgmmaRead& r : gs.front()) {
        uint16_t now = 0;
        std::memcpy(&now, b_.shared(r.addr, r.bytes), r.bytes);
        if (now != r.value)
          throw std::runtime_error("hazard: shared memory a wgmma read changed before its group was waited for");
      }
      gs.erase(gs.begin());
    }
  for (auto& [wg, gs] : resultGroups_)
    while (gs.size() > pending) {
      for (const Value* v : gs.front().values)
        if (auto it = inFlight_.find(v); it != inFlight_.end() && it->second == gs.front().serial) inFlight_.erase(it);
      gs.erase(gs.begin());
    }
}

void Agent::checkNoResultInFlight(const Operation& op) const {
  if (inFlight_.empty() || op.is("kern.wgmma")) return;
  // An scf.for carries its initial values (carryInFlight); only its bounds are read.
  const unsigned read = op.is("scf.for") ? 3 : op.numOperands();
  for (unsigned i = 0; i < read; ++i)
    if (const Value* v = op.operand(i); inFlight_.count(v))
      throw std::runtime_error("hazard: " + op.name() + " reads a wgmma result before its group was waited for");
}

Agent::ResultGroup* Agent::groupWithSerial(uint64_t serial) {
  for (auto& [wg, gs] : resultGroups_)
    for (ResultGroup& g : gs)
      if (g.serial == serial) return &g;
  for (auto& [wg, g] : openResults_)
    if (g.serial == serial) return &g;
  return nullptr;
}

void Agent::carryInFlight(const std::vector<const Value*>& from, const std::vector<const Value*>& to) {
  // Decided for all first: `from` may name values of `to` (a loop's arguments yielded back, swapped).
  std::vector<uint64_t> serial(to.size(), 0);
  for (size_t i = 0; i < to.size() && !inFlight_.empty(); ++i)
    if (auto it = inFlight_.find(from[i]); it != inFlight_.end()) serial[i] = it->second;
  for (size_t i = 0; i < to.size(); ++i) {
    ResultGroup* g = serial[i] ? groupWithSerial(serial[i]) : nullptr;
    if (!g) {
      inFlight_.erase(to[i]);
      continue;
    }
    inFlight_[to[i]] = serial[i];
    g->values.push_back(to[i]);
  }
}

namespace {
// The stage address of element (r + row, c + col), where off = Swizzle(r * rowBytes + c * elemBytes)
// came from kern.smem_offset and {row, col} is the op's displacement: the element the op means
// (kern_ops.h), found by undoing the swizzle (an involution) rather than by the emitter's
// XOR / add shortcut, so a displacement that did not compose would store somewhere else.
uint64_t displacedAddress(const kern::SmemLayout& l, uint64_t base, uint64_t slot, uint64_t off, const Operation& op) {
  uint64_t plain = uint64_t(l.swizzle.apply(int64_t(off)));
  int64_t r = int64_t(plain) / l.rowBytes() + op.intAttr("row", 0);
  int64_t c = (int64_t(plain) % l.rowBytes()) / l.elemBytes() + op.intAttr("col", 0);
  if (c * l.elemBytes() >= l.rowBytes()) throw std::runtime_error(op.name() + " addresses a column past its row");
  return base + slot * uint64_t(l.stageBytes()) + uint64_t(l.swizzle.apply(r * l.rowBytes() + c * l.elemBytes()));
}
}  // namespace

// One element, a packed 16-bit pair, or (five operands) two 32-bit elements: st.shared.v2, whose
// address must be 8-byte aligned and whose second element is the next column of the same row.
void Agent::stShared(const Operation& op, const Mask& m) {
  auto l = *kern::smemLayout(op.operand(0)->type());
  size_t bytes = kern::isFrag(op.operand(3)->type()) ? 4 : size_t(l.elemBytes());
  const bool pair = op.numOperands() == 5;
  for (int t = 0; t < b_.T_; ++t) {
    if (!m[size_t(t)]) continue;
    uint64_t a = displacedAddress(l, get(op.operand(0))[size_t(t)], get(op.operand(1))[size_t(t)],
                                  get(op.operand(2))[size_t(t)], op);
    if (pair && a % 8 != 0) throw std::runtime_error("st.shared.v2 of a misaligned address");
    for (unsigned i = 0; i < (pair ? 2u : 1u); ++i) {
      uint64_t v = get(op.operand(3 + i))[size_t(t)];
      std::memcpy(b_.shared(a + i * bytes, bytes), &v, bytes);
    }
  }
}

// The split-K cluster hand-over (kern_ops.h): 16-byte stores into this block's shared memory and
// loads from a peer's, each word checked against the release / acquire order of the PTX memory
// model: the reader must have acquired a release the writer made after its store, and the writer
// must have acquired a release the reader made after its load before it stores to the word again.
void Agent::stSharedV4(const Operation& op, const Mask& m) {
  auto l = *kern::smemLayout(op.operand(0)->type());
  for (int t = 0; t < b_.T_; ++t) {
    if (!m[size_t(t)]) continue;
    uint64_t a = displacedAddress(l, get(op.operand(0))[size_t(t)], get(op.operand(1))[size_t(t)],
                                  get(op.operand(2))[size_t(t)], op);
    if (a % 16 != 0) throw std::runtime_error("a 16-byte st.shared of a misaligned address");
    for (unsigned i = 0; i < 4; ++i) {
      uint64_t word = a + 4 * i;
      auto r = b_.smemPeerReads_.find(word);
      if (r != b_.smemPeerReads_.end())
        b_.requireAcquired(*r->second.first, r->second.second,
                           "a block stored to shared memory another block had read");
      uint32_t v = uint32_t(get(op.operand(3 + i))[size_t(t)]);
      std::memcpy(b_.shared(word, 4), &v, 4);
      b_.smemWrites_[word] = ++b_.cluster_.epoch_;
    }
  }
}

// One element of this block's shared memory (per-column scale_b copied with the stage): bytes a
// TMA copy landed may be read only once the agent saw the mbarrier phase that copy completes.
void Agent::ldShared(const Operation& op, const Mask& m) {
  auto l = *kern::smemLayout(op.operand(0)->type());
  const size_t eb = size_t(l.elemBytes());
  Lanes& out = set(op.result());
  for (int t = 0; t < b_.T_; ++t) {
    if (!m[size_t(t)]) continue;
    uint64_t a = displacedAddress(l, get(op.operand(0))[size_t(t)], get(op.operand(1))[size_t(t)],
                                  get(op.operand(2))[size_t(t)], op);
    if (a % eb != 0) throw std::runtime_error("ld.shared of a misaligned address");
    const BlockSim::Landing& copy = b_.landings_.at(a);
    if (copy.barrierPlus1) {
      auto seen = phasesSeen_.find(copy.barrierPlus1 - 1);
      if (seen == phasesSeen_.end() || seen->second < copy.phases)
        throw std::runtime_error("hazard: a ld.shared reads shared memory (byte offset " + std::to_string(a) +
                                 ") before its agent saw the mbarrier phase that TMA copy completes");
    }
    uint64_t v = 0;
    std::memcpy(&v, b_.shared(a, eb), eb);
    out[size_t(t)] = v;
  }
}

void Agent::ldSharedRemoteV4(const Operation& op, const Mask& m) {
  auto l = *kern::smemLayout(op.operand(0)->type());
  std::vector<Lanes*> out;
  for (unsigned i = 0; i < 4; ++i) out.push_back(&set(op.result(i)));
  for (int t = 0; t < b_.T_; ++t) {
    if (!m[size_t(t)]) continue;
    uint64_t a = displacedAddress(l, get(op.operand(0))[size_t(t)], get(op.operand(1))[size_t(t)],
                                  get(op.operand(2))[size_t(t)], op);
    if (a % 16 != 0) throw std::runtime_error("a 16-byte ld.shared::cluster of a misaligned address");
    BlockSim& peer = b_.peer(asI(get(op.operand(3))[size_t(t)], types::i32()));
    for (unsigned i = 0; i < 4; ++i) {
      uint64_t word = a + 4 * i;
      auto w = peer.smemWrites_.find(word);
      if (&peer != &b_ && w != peer.smemWrites_.end())
        b_.requireAcquired(peer, w->second, "a block read shared memory another block stored to");
      if (&peer != &b_) peer.smemPeerReads_[word] = {&b_, ++b_.cluster_.epoch_};
      uint32_t v;
      std::memcpy(&v, peer.shared(word, 4), 4);
      (*out[i])[size_t(t)] = v;
    }
  }
}

// stmatrix .x2 / .x4 (PTX ISA "stmatrix"): lanes 8i..8i+7 of a warp address the rows of matrix i; lane l
// holds row l/4, elements 2(l%4) and 2(l%4)+1, of each matrix, in v_i. Whole warps only. With
// .trans the matrix is stored transposed: the segment lane 8i + c addresses receives column c, its
// element r from row r (lane 4r + c / 2, half c % 2 of its v_i).
void Agent::stmatrix(const Operation& op, const Mask& m) {
  auto l = *kern::smemLayout(op.operand(0)->type());
  const Attribute* transAttr = op.attr("trans");
  const bool trans = transAttr && transAttr->asBool();
  for (int w = 0; w < b_.T_ / 32; ++w) {
    int active = 0;
    for (int t = 32 * w; t < 32 * w + 32; ++t) active += m[size_t(t)] ? 1 : 0;
    if (active == 0) continue;
    if (active != 32) throw std::runtime_error("kern.stmatrix with part of a warp active");
    // The row segment lane `addresser` of the warp addresses (the 128B swizzle moves whole 16-byte
    // segments, so the elements inside one stay in order).
    auto segment = [&](int addresser) {
      size_t t = size_t(32 * w + addresser);
      uint64_t seg = displacedAddress(l, get(op.operand(0))[t], get(op.operand(1))[t], get(op.operand(2))[t], op);
      if (seg % 16 != 0) throw std::runtime_error("kern.stmatrix row segment not 16-byte aligned");
      return seg;
    };
    for (int i = 0; i < int(op.numOperands()) - 3; ++i)  // .x2 or .x4
      for (int lane = 0; lane < 32; ++lane) {
        uint32_t v = uint32_t(get(op.operand(unsigned(3 + i)))[size_t(32 * w + lane)]);
        int r = lane / 4, c = 2 * (lane % 4);  // the matrix row and first column lane's v_i holds
        if (!trans) {
          std::memcpy(b_.shared(segment(8 * i + r) + uint64_t(2 * c), 4), &v, 4);
          continue;
        }
        for (int h = 0; h < 2; ++h) {
          uint16_t half = uint16_t(v >> (16 * h));
          std::memcpy(b_.shared(segment(8 * i + c + h) + uint64_t(2 * r), 2), &half, 2);
        }
      }
  }
}

void Agent::tmaStore(const Operation& op, const Mask& m) {
  int T = b_.T_;
  auto lanes = [&](const std::function<void(int)>& f) {
    for (int t = 0; t < T; ++t)
      if (m[size_t(t)]) f(t);
  };
  auto l = *kern::smemLayout(op.operand(1)->type());
  lanes([&](int t) {
    const size_t mapIndex = size_t(get(op.operand(0))[size_t(t)]);
    const runtime::TensorMapDesc& d = b_.l_.maps.at(mapIndex);
    int eb = bitWidth(d.dtype) / 8;
    size_t rank = d.globalDims.size();
    std::vector<int64_t> c;
    for (size_t i = 0; i < rank; ++i) c.push_back(asI(get(op.operand(unsigned(3 + i)))[size_t(t)], types::i32()));
    uint64_t src = get(op.operand(1))[size_t(t)] + get(op.operand(2))[size_t(t)] * uint64_t(l.stageBytes()) +
                   uint64_t(op.intAttr("row", 0)) * uint64_t(l.rowBytes());
    // Outside the tensor: clipped, nothing written. The whole box is the store's source, clipped
    // or not: its bytes join the thread's open bulk group, to be checked when the group retires.
    std::vector<StoreRead>& open = b_.bulk_[t].open;
    checkTmaBox("a TMA store", d, c, src);
    forEachBoxElement(d, c, src, [&](bool in, uint64_t global, uint64_t shared) {
      const uint8_t* from = b_.shared(shared, size_t(eb));
      if (in) std::memcpy(b_.mem_.ptr(global, size_t(eb)), from, size_t(eb));
      for (int i = 0; i < eb; ++i) open.push_back({uint32_t(shared + uint64_t(i)), from[i]});
    });
  });
}

// cp.async.bulk.commit_group: the thread's stores since its last commit form a group (an empty
// one when there were none, as in PTX).
void Agent::bulkCommit(const Mask& m) {
  for (int t = 0; t < b_.T_; ++t) {
    if (!m[size_t(t)]) continue;
    BulkGroups& g = b_.bulk_[t];
    g.committed.push_back(std::move(g.open));
    g.open.clear();
  }
}

// cp.async.bulk.wait_group(.read) N: the thread's committed groups but the N most recent are done
// (with .read, done reading their source; without, wholly done, which includes it).
void Agent::bulkWait(const Operation& op, const Mask& m) {
  size_t pending = size_t(op.intAttr("pending", 0));
  const Attribute* read = op.attr("read");
  const std::string when = std::string("before cp.async.bulk.wait_group") + (read && read->asBool() ? ".read" : "") +
                           " retired it (its box was overwritten while the store could still be reading it)";
  for (int t = 0; t < b_.T_; ++t) {
    if (!m[size_t(t)]) continue;
    auto& gs = b_.bulk_[t].committed;
    if (gs.size() <= pending) continue;
    size_t retired = gs.size() - pending;
    for (size_t i = 0; i < retired; ++i) b_.checkStoreSource(gs[i], when);
    gs.erase(gs.begin(), gs.begin() + long(retired));
  }
}

void BlockSim::checkStoreSource(const std::vector<StoreRead>& group, const std::string& when) {
  for (const StoreRead& r : group)
    if (*shared(r.addr, 1) != r.value)
      throw std::runtime_error("hazard: a TMA store's source in shared memory (byte offset " + std::to_string(r.addr) +
                               ") changed " + when);
}

// A store group never retired may still be reading when the block exits; its source must not have
// changed since the store was issued.
void BlockSim::checkOutstandingStores() {
  const std::string when = "while no cp.async.bulk.wait_group.read had retired it by the block's end (its box was "
                           "overwritten while the store could still be reading it)";
  for (auto& [t, g] : bulk_) {
    for (const auto& group : g.committed) checkStoreSource(group, when);
    checkStoreSource(g.open, when);
  }
  bulk_.clear();
}

}  // namespace kiln::testing::wssim
