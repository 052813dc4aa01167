// The sm90 consumer's split-K and stream-K hand-over (docs/sm90-strategy.md, "Split-K",
// "Stream-K"): a unit that does not finish its tile stores its partial sums in the workspace and
// flags them; the unit that finishes adds its peers' sums to its own and runs the epilogue.
#include "schedule/sm90/lowering.h"

namespace kiln::sm90 {
using namespace ir;

namespace {

// split_k and stream_k (docs/sm90-strategy.md, "Split-K", "Stream-K"). Each consumer group (a
// warpgroup's rows of the tile, or with ping-pong the whole tile) has a flag and a slot of partial
// sums: per tile and slice but the last with split_k, per block with stream_k (a block contributes
// at most once per launch). The group's 128 threads keep their accumulators in registers, so a
// slot is laid out by quad of registers, then thread: registers 4q .. 4q+3 of thread t at
// (q * 128 + t) * 4, one 16-byte st/ld.global.v4 each, a warp's covering 512 contiguous bytes.
struct GroupSlot {
  Value* thread;   // i64: (t % 128), the thread's index in the group
  Value* group;    // i32: the group's index within the tile
  int groups;      // consumer groups per tile
};

GroupSlot groupSlot(KernBuilder& b, const Request& r, Value* wg) {
  Value* tid = b.op1("kern.thread_id", {}, types::i32());
  return {b.cast(b.rem(tid, b.i32(128)), types::i64()), r.geo.pingpong ? b.i32(0) : wg, r.geo.tileGroups};
}

// The group's flag of owner `owner` (a tile with split_k, a block with stream_k).
Value* flagOf(KernBuilder& b, const Kernel& k, const GroupSlot& gs, Value* owner) {
  Value* index = b.add(b.mulConst(owner, gs.groups), gs.group);
  return b.named(b.ptrAdd(k.params.wsFlags, b.cast(index, types::i64())), "flag");
}

// The thread's first element of slot `slot` (counted in groups' slots) of the partials.
Value* slotBase(KernBuilder& b, const Kernel& k, const GroupSlot& gs, Value* slot, int64_t values) {
  Value* first = b.add(b.mulConst(b.cast(slot, types::i64()), values * 128), b.mulConst(gs.thread, 4));
  return b.ptrAdd(k.params.wsPartials, first);
}

// split_k: slice j's slot of the group's partials for this tile.
Value* splitSlot(KernBuilder& b, const Request& r, const Kernel& k, const Unit& u, const GroupSlot& gs, Value* j,
                 int64_t values) {
  Value* slot = b.add(b.mulConst(b.add(b.mulConst(u.tile, r.geo.splits - 1), j), gs.groups), gs.group);
  return slotBase(b, k, gs, slot, values);
}

// stream_k: block `block`'s slot of the group's partials.
Value* blockSlot(KernBuilder& b, const Kernel& k, const GroupSlot& gs, Value* block, int64_t values) {
  return slotBase(b, k, gs, b.add(b.mulConst(block, gs.groups), gs.group), values);
}

// One thread of the group runs `fill`.
template <typename F>
void ifElected(KernBuilder& b, const GroupSlot& gs, F fill) {
  b.ifThen(b.cmp("eq", gs.thread, b.i64(0)), fill);
}

// A unit that does not finish its tile: store the sums at `base`, then (once the group's 128
// threads have) release them with one add to `flag`.
void handOverPartial(KernBuilder& b, Value* wg, const GroupSlot& gs, Value* flag, Value* base,
                     const std::vector<Value*>& acc) {
  Value* on = b.i1(true);
  for (size_t q = 0; q < acc.size() / 4; ++q)
    b.create("kern.st_global",
             {b.ptrAdd(base, b.i64(int64_t(q) * 512)), on, acc[4 * q], acc[4 * q + 1], acc[4 * q + 2], acc[4 * q + 3]},
             {});
  b.create("kern.named_barrier", {groupBarrier(b, wg)}, {}, {{"threads", int64_t{128}}});
  ifElected(b, gs, [&] { b.create("kern.red_release", {flag, b.i32(1)}, {}); });
}

// acc + the sums at `base` (after the acquire that made them visible).
std::vector<Value*> addPartial(KernBuilder& b, Value* base, std::vector<Value*> acc) {
  Value* on = b.i1(true);
  for (size_t q = 0; q < acc.size() / 4; ++q) {
    Operation* ld = b.create("kern.ld_global", {b.ptrAdd(base, b.i64(int64_t(q) * 512)), on},
                             std::vector<Type>(4, types::f32()));
    for (unsigned e = 0; e < 4; ++e)
      acc[4 * q + e] = b.named(b.op1("arith.addf", {acc[4 * q + e], ld->result(e)}, types::f32()), "acc");
  }
  return acc;
}

// split_k: the slice that finishes its tile. One thread waits until the other S - 1 slices have
// released their sums and sets the flag back to zero for the next launch; after the group's
// barrier every thread adds the sums to its accumulators (slice order: the result does not depend
// on timing).
std::vector<Value*> addSplitPartials(KernBuilder& b, const Request& r, const Kernel& k, const Unit& u, Value* wg,
                                     const GroupSlot& gs, std::vector<Value*> acc) {
  Value* flag = flagOf(b, k, gs, u.tile);
  ifElected(b, gs, [&] {
    b.create("kern.spin_wait", {flag, b.i32(r.geo.splits - 1)}, {});
    b.create("kern.st_global", {flag, b.i1(true), b.i32(0)}, {});
  });
  b.create("kern.named_barrier", {groupBarrier(b, wg)}, {}, {{"threads", int64_t{128}}});
  for (int j = 0; j + 1 < r.geo.splits; ++j)
    acc = addPartial(b, splitSlot(b, r, k, u, gs, b.i32(j), int64_t(acc.size())), acc);
  return acc;
}

// stream_k: the unit that finishes a tile lower blocks began (peers > 0). One thread waits for
// each of blocks b-1 .. b-peers to release its sums and resets its flag; after the group's
// barrier every thread adds them, nearest block first (a fixed order: the result does not depend
// on timing). With peers == 0 both loops run no iterations. In clusters of cs blocks the walkers
// are the clusters, and a block's peers are the blocks of its rank in the clusters below.
std::vector<Value*> addPeerPartials(KernBuilder& b, const Request& r, const Kernel& k, const Unit& u, Value* wg,
                                    const GroupSlot& gs, std::vector<Value*> acc) {
  Value* block = b.op1("kern.block_id", {}, types::i32(), {{"dim", "x"}});
  int64_t cs = r.geo.clusterSize;
  auto peer = [&](Value* j) { return b.sub(b.addConst(block, -cs), b.mulConst(j, cs)); };  // block b-cs(1+j)
  ifElected(b, gs, [&] {
    Operation* wait = b.create("scf.for", {b.i32(0), u.peers, b.i32(1)}, {}, {}, 1);
    Block* body = wait->region(0).addBlock();
    Value* j = body->addArgument(types::i32(), "j");
    InsertionGuard guard(b);
    b.setInsertionPointToEnd(body);
    Value* flag = flagOf(b, k, gs, peer(j));
    b.create("kern.spin_wait", {flag, b.i32(1)}, {});
    b.create("kern.st_global", {flag, b.i1(true), b.i32(0)}, {});
    b.create("scf.yield", {}, {});
  });
  b.create("kern.named_barrier", {groupBarrier(b, wg)}, {}, {{"threads", int64_t{128}}});
  std::vector<Value*> forOps = {b.i32(0), u.peers, b.i32(1)};
  forOps.insert(forOps.end(), acc.begin(), acc.end());
  Operation* loop = b.create("scf.for", forOps, std::vector<Type>(acc.size(), types::f32()), {}, 1);
  Block* body = loop->region(0).addBlock();
  Value* j = body->addArgument(types::i32(), "j");
  std::vector<Value*> carried;
  for (size_t i = 0; i < acc.size(); ++i) carried.push_back(body->addArgument(types::f32(), "acc"));
  {
    InsertionGuard guard(b);
    b.setInsertionPointToEnd(body);
    b.create("scf.yield", addPartial(b, blockSlot(b, k, gs, peer(j), int64_t(acc.size())), carried), {});
  }
  for (size_t i = 0; i < acc.size(); ++i) acc[i] = b.named(loop->result(unsigned(i)), "acc");
  return acc;
}

}  // namespace

bool buildSplitEpilogue(KernBuilder& b, const Request& r, const Kernel& k, const Unit& u, Value* wg,
                        const std::vector<Value*>& out, const std::function<bool(const std::vector<Value*>&)>& epilogue) {
  GroupSlot gs = groupSlot(b, r, wg);
  Value* finishes = r.geo.streamK ? b.cmp("eq", b.add(u.kbase, u.ksteps), k.ktiles)
                                  : b.cmp("eq", u.split, b.i32(r.geo.splits - 1));
  Operation* finish = b.create("scf.if", {finishes}, {}, {}, 2);
  InsertionGuard inner(b);
  b.setInsertionPointToEnd(finish->region(1).addBlock());
  int64_t values = int64_t(out.size());
  if (r.geo.streamK) {
    Value* block = b.op1("kern.block_id", {}, types::i32(), {{"dim", "x"}});
    handOverPartial(b, wg, gs, flagOf(b, k, gs, block), blockSlot(b, k, gs, block, values), out);
  } else {
    handOverPartial(b, wg, gs, flagOf(b, k, gs, u.tile), splitSlot(b, r, k, u, gs, u.split, values), out);
  }
  b.create("scf.yield", {}, {});
  b.setInsertionPointToEnd(finish->region(0).addBlock());
  bool ok = epilogue(r.geo.streamK ? addPeerPartials(b, r, k, u, wg, gs, out) : addSplitPartials(b, r, k, u, wg, gs, out));
  b.create("scf.yield", {}, {});
  return ok;
}

}  // namespace kiln::sm90
