// The sm90 consumer's split-K and stream-K hand-over (docs/sm90-strategy.md, "Split-K",
// "Stream-K"): a unit that does not finish its tile stores its partial sums in the workspace and
// flags them; the unit that finishes adds its peers' sums to its own and runs the epilogue.
#include "schedule/sm90_context.h"

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

GroupSlot groupSlot(Plan& p, Value* wg) {
  KernBuilder& b = p.b;
  Value* tid = b.op1("kern.thread_id", {}, types::i32());
  return {b.cast(b.rem(tid, b.i32(128)), types::i64()), p.pingpong() ? b.i32(0) : wg, p.pingpong() ? 1 : p.groups()};
}

// The group's flag of owner `owner` (a tile with split_k, a block with stream_k).
Value* flagOf(Plan& p, const GroupSlot& gs, Value* owner) {
  KernBuilder& b = p.b;
  Value* index = b.add(b.mulConst(owner, gs.groups), gs.group);
  return b.named(b.ptrAdd(p.wsFlags, b.cast(index, types::i64())), "flag");
}

// The thread's first element of slot `slot` (counted in groups' slots) of the partials.
Value* slotBase(Plan& p, const GroupSlot& gs, Value* slot, int64_t values) {
  KernBuilder& b = p.b;
  Value* first = b.add(b.mulConst(b.cast(slot, types::i64()), values * 128), b.mulConst(gs.thread, 4));
  return b.ptrAdd(p.wsPartials, first);
}

// split_k: slice j's slot of the group's partials for this tile.
Value* splitSlot(Plan& p, const GroupSlot& gs, Value* j, int64_t values) {
  KernBuilder& b = p.b;
  Value* slot = b.add(b.mulConst(b.add(b.mulConst(p.tile, p.splits() - 1), j), gs.groups), gs.group);
  return slotBase(p, gs, slot, values);
}

// stream_k: block `block`'s slot of the group's partials.
Value* blockSlot(Plan& p, const GroupSlot& gs, Value* block, int64_t values) {
  return slotBase(p, gs, p.b.add(p.b.mulConst(block, gs.groups), gs.group), values);
}

// One thread of the group runs `fill`.
template <typename F>
void ifElected(Plan& p, const GroupSlot& gs, F fill) {
  p.b.ifThen(p.b.cmp("eq", gs.thread, p.b.i64(0)), fill);
}

// A unit that does not finish its tile: store the sums at `base`, then (once the group's 128
// threads have) release them with one add to `flag`.
void handOverPartial(Plan& p, Value* wg, const GroupSlot& gs, Value* flag, Value* base,
                     const std::vector<Value*>& acc) {
  KernBuilder& b = p.b;
  Value* on = b.i1(true);
  for (size_t q = 0; q < acc.size() / 4; ++q)
    b.create("kern.st_global",
             {b.ptrAdd(base, b.i64(int64_t(q) * 512)), on, acc[4 * q], acc[4 * q + 1], acc[4 * q + 2], acc[4 * q + 3]},
             {});
  b.create("kern.named_barrier", {groupBarrier(b, wg)}, {}, {{"threads", int64_t{128}}});
  ifElected(p, gs, [&] { b.create("kern.red_release", {flag, b.i32(1)}, {}); });
}

// acc + the sums at `base` (after the acquire that made them visible).
std::vector<Value*> addPartial(Plan& p, Value* base, std::vector<Value*> acc) {
  KernBuilder& b = p.b;
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
std::vector<Value*> addSplitPartials(Plan& p, Value* wg, const GroupSlot& gs, std::vector<Value*> acc) {
  KernBuilder& b = p.b;
  Value* flag = flagOf(p, gs, p.tile);
  ifElected(p, gs, [&] {
    b.create("kern.spin_wait", {flag, b.i32(p.splits() - 1)}, {});
    b.create("kern.st_global", {flag, b.i1(true), b.i32(0)}, {});
  });
  b.create("kern.named_barrier", {groupBarrier(b, wg)}, {}, {{"threads", int64_t{128}}});
  for (int j = 0; j + 1 < p.splits(); ++j) acc = addPartial(p, splitSlot(p, gs, b.i32(j), int64_t(acc.size())), acc);
  return acc;
}

// stream_k: the unit that finishes a tile lower blocks began (peers > 0). One thread waits for
// each of blocks b-1 .. b-peers to release its sums and resets its flag; after the group's
// barrier every thread adds them, nearest block first (a fixed order: the result does not depend
// on timing). With peers == 0 both loops run no iterations. In clusters of cs blocks the walkers
// are the clusters, and a block's peers are the blocks of its rank in the clusters below.
std::vector<Value*> addPeerPartials(Plan& p, Value* wg, const GroupSlot& gs, std::vector<Value*> acc) {
  KernBuilder& b = p.b;
  Value* block = b.op1("kern.block_id", {}, types::i32(), {{"dim", "x"}});
  int64_t cs = p.clusterSize();
  auto peer = [&](Value* j) { return b.sub(b.addConst(block, -cs), b.mulConst(j, cs)); };  // block b-cs(1+j)
  ifElected(p, gs, [&] {
    Operation* wait = b.create("scf.for", {b.i32(0), p.peers, b.i32(1)}, {}, {}, 1);
    Block* body = wait->region(0).addBlock();
    Value* j = body->addArgument(types::i32(), "j");
    InsertionGuard guard(b);
    b.setInsertionPointToEnd(body);
    Value* flag = flagOf(p, gs, peer(j));
    b.create("kern.spin_wait", {flag, b.i32(1)}, {});
    b.create("kern.st_global", {flag, b.i1(true), b.i32(0)}, {});
    b.create("scf.yield", {}, {});
  });
  b.create("kern.named_barrier", {groupBarrier(b, wg)}, {}, {{"threads", int64_t{128}}});
  std::vector<Value*> forOps = {b.i32(0), p.peers, b.i32(1)};
  forOps.insert(forOps.end(), acc.begin(), acc.end());
  Operation* loop = b.create("scf.for", forOps, std::vector<Type>(acc.size(), types::f32()), {}, 1);
  Block* body = loop->region(0).addBlock();
  Value* j = body->addArgument(types::i32(), "j");
  std::vector<Value*> carried;
  for (size_t i = 0; i < acc.size(); ++i) carried.push_back(body->addArgument(types::f32(), "acc"));
  {
    InsertionGuard guard(b);
    b.setInsertionPointToEnd(body);
    b.create("scf.yield", addPartial(p, blockSlot(p, gs, peer(j), int64_t(acc.size())), carried), {});
  }
  for (size_t i = 0; i < acc.size(); ++i) acc[i] = b.named(loop->result(unsigned(i)), "acc");
  return acc;
}

}  // namespace

bool buildSplitEpilogue(Plan& p, Value* wg, const std::vector<Value*>& out,
                        const std::function<bool(const std::vector<Value*>&)>& epilogue) {
  KernBuilder& b = p.b;
  GroupSlot gs = groupSlot(p, wg);
  Value* finishes = p.streamK() ? b.cmp("eq", b.add(p.kbase, p.ksteps), p.ktiles)
                                : b.cmp("eq", p.split, b.i32(p.splits() - 1));
  Operation* finish = b.create("scf.if", {finishes}, {}, {}, 2);
  InsertionGuard inner(b);
  b.setInsertionPointToEnd(finish->region(1).addBlock());
  int64_t values = int64_t(out.size());
  if (p.streamK()) {
    Value* block = b.op1("kern.block_id", {}, types::i32(), {{"dim", "x"}});
    handOverPartial(p, wg, gs, flagOf(p, gs, block), blockSlot(p, gs, block, values), out);
  } else {
    handOverPartial(p, wg, gs, flagOf(p, gs, p.tile), splitSlot(p, gs, p.split, values), out);
  }
  b.create("scf.yield", {}, {});
  b.setInsertionPointToEnd(finish->region(0).addBlock());
  bool ok = epilogue(p.streamK() ? addPeerPartials(p, wg, gs, out) : addSplitPartials(p, wg, gs, out));
  b.create("scf.yield", {}, {});
  return ok;
}

}  // namespace kiln::sm90
