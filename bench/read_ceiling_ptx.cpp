#include "bench/read_ceiling_ptx.h"

namespace kiln::bench {
namespace {

// Grid-stride over 16-byte vectors, four independent loads in flight per thread and iteration,
// XOR-folded into one register. The fold is stored only when it equals a constant, so the loads
// cannot be removed and (for any real input) nothing is written: the kernel's DRAM traffic is
// its reads. Consecutive threads read consecutive vectors, so every warp load is 512 contiguous
// bytes. @NAME@, @POLICY@ and @HINT@ are filled in per L2 policy (bothPolicies below).
constexpr const char* kLoadEntry = R"(
.visible .entry @NAME@(.param .u64 p_src, .param .u64 p_n16, .param .u64 p_out)
{
  .reg .pred %p<3>;
  .reg .b32 %r<32>;
  .reg .b64 %rd<16>;
@POLICY@
  ld.param.u64 %rd1, [p_src];
  ld.param.u64 %rd2, [p_n16];
  ld.param.u64 %rd3, [p_out];
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  mov.u32 %r4, %nctaid.x;
  mul.wide.u32 %rd4, %r1, %r2;
  cvt.u64.u32 %rd5, %r3;
  add.u64 %rd4, %rd4, %rd5;
  mul.wide.u32 %rd6, %r4, %r2;
  shl.b64 %rd7, %rd6, 2;
  mul.lo.u64 %rd8, %rd6, 3;
  shl.b64 %rd11, %rd6, 4;
  mov.b32 %r10, 0;
UNROLLED:
  add.u64 %rd9, %rd4, %rd8;
  setp.ge.u64 %p1, %rd9, %rd2;
  @%p1 bra TAIL;
  shl.b64 %rd10, %rd4, 4;
  add.u64 %rd10, %rd1, %rd10;
  ld.global.nc.L1::no_allocate@HINT@.v4.u32 {%r11, %r12, %r13, %r14}, [%rd10]@POLICY_OPERAND@;
  add.u64 %rd12, %rd10, %rd11;
  ld.global.nc.L1::no_allocate@HINT@.v4.u32 {%r15, %r16, %r17, %r18}, [%rd12]@POLICY_OPERAND@;
  add.u64 %rd12, %rd12, %rd11;
  ld.global.nc.L1::no_allocate@HINT@.v4.u32 {%r19, %r20, %r21, %r22}, [%rd12]@POLICY_OPERAND@;
  add.u64 %rd12, %rd12, %rd11;
  ld.global.nc.L1::no_allocate@HINT@.v4.u32 {%r23, %r24, %r25, %r26}, [%rd12]@POLICY_OPERAND@;
  xor.b32 %r11, %r11, %r12;
  xor.b32 %r13, %r13, %r14;
  xor.b32 %r15, %r15, %r16;
  xor.b32 %r17, %r17, %r18;
  xor.b32 %r19, %r19, %r20;
  xor.b32 %r21, %r21, %r22;
  xor.b32 %r23, %r23, %r24;
  xor.b32 %r25, %r25, %r26;
  xor.b32 %r11, %r11, %r13;
  xor.b32 %r15, %r15, %r17;
  xor.b32 %r19, %r19, %r21;
  xor.b32 %r23, %r23, %r25;
  xor.b32 %r11, %r11, %r15;
  xor.b32 %r19, %r19, %r23;
  xor.b32 %r10, %r10, %r11;
  xor.b32 %r10, %r10, %r19;
  add.u64 %rd4, %rd4, %rd7;
  bra UNROLLED;
TAIL:
  setp.ge.u64 %p1, %rd4, %rd2;
  @%p1 bra DONE;
  shl.b64 %rd10, %rd4, 4;
  add.u64 %rd10, %rd1, %rd10;
  ld.global.nc.L1::no_allocate@HINT@.v4.u32 {%r11, %r12, %r13, %r14}, [%rd10]@POLICY_OPERAND@;
  xor.b32 %r11, %r11, %r12;
  xor.b32 %r13, %r13, %r14;
  xor.b32 %r10, %r10, %r11;
  xor.b32 %r10, %r10, %r13;
  add.u64 %rd4, %rd4, %rd6;
  bra TAIL;
DONE:
  setp.ne.u32 %p2, %r10, 1511506142;
  @%p2 bra EXIT;
  st.global.u32 [%rd3], %r10;
EXIT:
  ret;
}
)";

// One thread issues: the chunks a block reads are numbered j = 0, 1, ...; chunk j goes to ring
// stage j % stages, whose mbarrier completes phase j / stages when its bytes have landed. The thread
// issues while fewer than `stages` chunks are in flight, then waits for the oldest. Stage indices,
// the phase parity and the source offset are stepped, not divided, in the loop. Nothing reads the
// ring: the copies are the work, and they cannot be removed.
constexpr const char* kTmaEntry = R"(
.visible .entry @NAME@(.param .u64 p_src, .param .u64 p_bytes, .param .u32 p_chunk, .param .u32 p_stages)
{
  .reg .pred %p<3>;
  .reg .b32 %r<24>;
  .reg .b64 %rd<20>;
@POLICY@
  mov.u32 %r1, %tid.x;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra EXIT;
  ld.param.u64 %rd1, [p_src];
  ld.param.u64 %rd2, [p_bytes];
  ld.param.u32 %r2, [p_chunk];
  ld.param.u32 %r3, [p_stages];
  mov.u32 %r4, %ctaid.x;
  mov.u32 %r5, %nctaid.x;
  // chunks = ceil(bytes / chunk); this block's: ceil((chunks - ctaid) / nctaid), none past the end
  cvt.u64.u32 %rd3, %r2;
  add.u64 %rd4, %rd2, %rd3;
  sub.u64 %rd4, %rd4, 1;
  div.u64 %rd4, %rd4, %rd3;
  cvt.u64.u32 %rd5, %r4;
  cvt.u64.u32 %rd6, %r5;
  setp.ge.u64 %p1, %rd5, %rd4;
  @%p1 bra EXIT;
  sub.u64 %rd7, %rd4, %rd5;
  add.u64 %rd7, %rd7, %rd6;
  sub.u64 %rd7, %rd7, 1;
  div.u64 %rd7, %rd7, %rd6;
  mov.u32 %r6, kiln_read_bars;
  mov.u32 %r7, kiln_read_ring;
  mov.u32 %r8, 0;
INIT:
  shl.b32 %r9, %r8, 3;
  add.u32 %r9, %r6, %r9;
  mbarrier.init.shared::cta.b64 [%r9], 1;
  add.u32 %r8, %r8, 1;
  setp.lt.u32 %p1, %r8, %r3;
  @%p1 bra INIT;
  fence.mbarrier_init.release.cluster;
  fence.proxy.async.shared::cta;
  // %rd8 chunks issued, %rd9 chunks landed, %rd12 the next chunk's offset, %rd18 the stride
  // between this block's chunks; %r15 the next issue's stage, %r16 the next wait's, %r17 its parity
  mov.u64 %rd8, 0;
  mov.u64 %rd9, 0;
  cvt.u64.u32 %rd10, %r3;
  mul.lo.u64 %rd12, %rd5, %rd3;
  mul.lo.u64 %rd18, %rd6, %rd3;
  mov.u32 %r15, 0;
  mov.u32 %r16, 0;
  mov.u32 %r17, 0;
LOOP:
  setp.ge.u64 %p1, %rd8, %rd7;
  @%p1 bra WAIT;
  add.u64 %rd11, %rd9, %rd10;
  setp.ge.u64 %p1, %rd8, %rd11;
  @%p1 bra WAIT;
  sub.u64 %rd13, %rd2, %rd12;
  min.u64 %rd13, %rd13, %rd3;
  cvt.u32.u64 %r10, %rd13;
  shl.b32 %r12, %r15, 3;
  add.u32 %r12, %r6, %r12;
  mul.lo.u32 %r13, %r15, %r2;
  add.u32 %r13, %r7, %r13;
  add.u64 %rd15, %rd1, %rd12;
  mbarrier.arrive.expect_tx.shared::cta.b64 %rd16, [%r12], %r10;
  cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes@HINT@ [%r13], [%rd15], %r10, [%r12]@POLICY_OPERAND@;
  add.u64 %rd8, %rd8, 1;
  add.u64 %rd12, %rd12, %rd18;
  add.u32 %r15, %r15, 1;
  setp.eq.u32 %p1, %r15, %r3;
  selp.u32 %r15, 0, %r15, %p1;
  bra LOOP;
WAIT:
  setp.ge.u64 %p1, %rd9, %rd7;
  @%p1 bra EXIT;
  shl.b32 %r12, %r16, 3;
  add.u32 %r12, %r6, %r12;
SPIN:
  mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r12], %r17;
  @!%p2 bra SPIN;
  add.u64 %rd9, %rd9, 1;
  add.u32 %r16, %r16, 1;
  setp.eq.u32 %p1, %r16, %r3;
  selp.u32 %r16, 0, %r16, %p1;
  xor.b32 %r18, %r17, 1;
  selp.u32 %r17, %r18, %r17, %p1;
  bra LOOP;
EXIT:
  ret;
}
)";

// The GEMM's operand stream without its math: 64 x 64 boxes of a 2D bf16 tensor map (128-byte
// swizzle, 8 KB) copied evict_first into a ring of `stages`, block b reading strip b: along dim 1
// (the rows of a K x N B, 128 bytes of each, as a 64-column tile reads B) or, with flags bit 4,
// along dim 0 (the columns of an M x K A, 64 rows at a time). Warp 0's first thread produces, warp
// 1's first thread consumes: it waits for each stage to land and releases it at once. The producer
// waits for the stage to be free: released by the consumer (the GEMM's protocol) or, with flags
// bit 3, landed (bare copies). With `burst` > 1 the first K step of each whole burst also waits for
// the burst's last stage (stages free in ring order), so the burst's copies go out back to back
// (a producer schedule measured and dropped: docs/sm90-strategy.md, "Load bursts"). Flags
// bit 0 adds a box of the small operand per stage (default policy: every block reads it, from L2):
// of a 64-row A at {k, 0}, or with bit 4 of a 64-column B at {0, k}; issued before the streamed box
// or (bit 1) after it; ring slots are then 16 KB (the streamed box first). `map_b` is the streamed
// operand's map, `map_a` the small one's. Flags
// bit 2 starts block b's K walk at step b * boxes / grid, wrapping. Flags bit 5 (stream-K) has the
// grid's blocks share the `strips` x `boxes` pairs evenly, block b taking the b-th run of them in
// strip-major order (so a block's run may end one strip and start the next). Flags bit 6 ends
// each block with a bulk store of 8 KB to `out` (a 64 x 64 bf16 tile's epilogue), waited for
// until written or, with bit 7, until read.
constexpr const char* kTileEntry = R"(
.visible .entry kiln_tile_stream(.param .align 64 .b8 p_map_b[128], .param .align 64 .b8 p_map_a[128],
                                 .param .u32 p_boxes, .param .u32 p_stages, .param .u32 p_burst,
                                 .param .u32 p_flags, .param .u32 p_strips, .param .u64 p_out)
{
  .reg .pred %p<12>;
  .reg .b32 %r<50>;
  .reg .b64 %rd<8>;
  .reg .b64 %policy;
  mov.u32 %r1, %tid.x;
  ld.param.u32 %r3, [p_boxes];
  ld.param.u32 %r4, [p_stages];
  ld.param.u32 %r5, [p_burst];
  ld.param.u32 %r6, [p_flags];
  mov.u32 %r7, kiln_stream_bars;
  add.u32 %r8, %r7, 256;
  mov.u32 %r9, kiln_read_ring;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra SYNCED;
  mov.u32 %r10, 0;
INIT:
  shl.b32 %r11, %r10, 3;
  add.u32 %r12, %r7, %r11;
  mbarrier.init.shared::cta.b64 [%r12], 1;
  add.u32 %r12, %r8, %r11;
  mbarrier.init.shared::cta.b64 [%r12], 1;
  add.u32 %r10, %r10, 1;
  setp.lt.u32 %p2, %r10, %r4;
  @%p2 bra INIT;
  fence.mbarrier_init.release.cluster;
  fence.proxy.async.shared::cta;
SYNCED:
  bar.sync 0;
  and.b32 %r2, %r1, 31;
  setp.ne.u32 %p1, %r2, 0;
  @%p1 bra EXIT;
  // %r41 the block's first step in the sequence of (strip, K step) pairs, %r46 how many it takes:
  // strip b's `boxes`, or with flags bit 5 an even share of all `strips` x `boxes` (stream-K)
  mov.u32 %r42, %ctaid.x;
  mul.lo.u32 %r41, %r42, %r3;
  mov.u32 %r46, %r3;
  and.b32 %r43, %r6, 32;
  setp.eq.u32 %p8, %r43, 0;
  @%p8 bra WHOLE;
  ld.param.u32 %r40, [p_strips];
  mul.lo.u32 %r43, %r40, %r3;
  mov.u32 %r44, %nctaid.x;
  mul.lo.u32 %r41, %r42, %r43;
  div.u32 %r41, %r41, %r44;
  add.u32 %r45, %r42, 1;
  mul.lo.u32 %r45, %r45, %r43;
  div.u32 %r45, %r45, %r44;
  sub.u32 %r46, %r45, %r41;
WHOLE:
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra CONSUMER;
  createpolicy.fractional.L2::evict_first.b64 %policy, 1.0;
  mov.u64 %rd2, p_map_b;
  cvta.param.u64 %rd1, %rd2;
  mov.u64 %rd2, p_map_a;
  cvta.param.u64 %rd3, %rd2;
  // %p5: A boxes; %p7 / %p6: A before / after B; %r11 bytes a stage; %r37 the barriers whose
  // completed phase frees a stage (empty, or full with bit 3); %p10: strips along dim 0
  and.b32 %r28, %r6, 1;
  setp.ne.u32 %p5, %r28, 0;
  selp.u32 %r11, 16384, 8192, %p5;
  and.b32 %r29, %r6, 2;
  setp.eq.u32 %p7, %r29, 0;
  and.pred %p7, %p7, %p5;
  setp.ne.u32 %p6, %r29, 0;
  and.pred %p6, %p6, %p5;
  and.b32 %r37, %r6, 8;
  setp.ne.u32 %p11, %r37, 0;
  selp.u32 %r37, %r7, %r8, %p11;
  and.b32 %r38, %r6, 16;
  setp.ne.u32 %p10, %r38, 0;
  mov.u32 %r30, 0;
  mov.u32 %r32, 0;
  and.b32 %r33, %r6, 4;
  setp.eq.u32 %p8, %r33, 0;
  @%p8 bra NOROT;
  mov.u32 %r33, %ctaid.x;
  mov.u32 %r34, %nctaid.x;
  mul.lo.u32 %r32, %r33, %r3;
  div.u32 %r32, %r32, %r34;
NOROT:
  // %r12 K steps issued, %r13 the next stage, %r14 its phase
  mov.u32 %r12, 0;
  mov.u32 %r13, 0;
  mov.u32 %r14, 0;
PLOOP:
  setp.ge.u32 %p1, %r12, %r46;
  @%p1 bra EXIT;
  setp.lt.u32 %p2, %r5, 2;
  @%p2 bra PWAIT;
  rem.u32 %r15, %r12, %r5;
  setp.ne.u32 %p2, %r15, 0;
  @%p2 bra PWAIT;
  add.u32 %r16, %r12, %r5;
  sub.u32 %r16, %r16, 1;
  setp.ge.u32 %p2, %r16, %r46;
  @%p2 bra PWAIT;
  add.u32 %r17, %r13, %r5;
  sub.u32 %r17, %r17, 1;
  setp.ge.u32 %p3, %r17, %r4;
  sub.u32 %r18, %r17, %r4;
  selp.u32 %r17, %r18, %r17, %p3;
  xor.b32 %r19, %r14, 1;
  selp.u32 %r19, %r19, %r14, %p3;
  xor.b32 %r19, %r19, 1;
  shl.b32 %r20, %r17, 3;
  add.u32 %r20, %r37, %r20;
LOOKAHEAD:
  mbarrier.try_wait.parity.shared::cta.b64 %p4, [%r20], %r19;
  @!%p4 bra LOOKAHEAD;
PWAIT:
  xor.b32 %r21, %r14, 1;
  shl.b32 %r22, %r13, 3;
  add.u32 %r23, %r37, %r22;
FREE:
  mbarrier.try_wait.parity.shared::cta.b64 %p4, [%r23], %r21;
  @!%p4 bra FREE;
  add.u32 %r24, %r7, %r22;
  mbarrier.arrive.expect_tx.shared::cta.b64 %rd4, [%r24], %r11;
  mul.lo.u32 %r25, %r13, %r11;
  add.u32 %r25, %r9, %r25;
  add.u32 %r26, %r25, 8192;
  // step %r12 is pair %r41 + %r12: strip %r10 (in elements), K step %r35 (rotated)
  add.u32 %r47, %r41, %r12;
  div.u32 %r10, %r47, %r3;
  mul.lo.u32 %r35, %r10, %r3;
  sub.u32 %r35, %r47, %r35;
  shl.b32 %r10, %r10, 6;
  add.u32 %r35, %r35, %r32;
  setp.ge.u32 %p9, %r35, %r3;
  sub.u32 %r36, %r35, %r3;
  selp.u32 %r35, %r36, %r35, %p9;
  shl.b32 %r27, %r35, 6;
  selp.u32 %r38, %r27, %r10, %p10;
  selp.u32 %r39, %r10, %r27, %p10;
  selp.u32 %r48, %r30, %r27, %p10;
  selp.u32 %r49, %r27, %r30, %p10;
  @%p7 cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r26], [%rd3, {%r48, %r49}], [%r24];
  cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint [%r25], [%rd1, {%r38, %r39}], [%r24], %policy;
  @%p6 cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r26], [%rd3, {%r48, %r49}], [%r24];
  add.u32 %r12, %r12, 1;
  add.u32 %r13, %r13, 1;
  setp.eq.u32 %p1, %r13, %r4;
  selp.u32 %r13, 0, %r13, %p1;
  xor.b32 %r31, %r14, 1;
  selp.u32 %r14, %r31, %r14, %p1;
  bra PLOOP;
  // The consumer also keeps the block alive until every copy has landed.
CONSUMER:
  mov.u32 %r12, 0;
  mov.u32 %r13, 0;
  mov.u32 %r14, 0;
CLOOP:
  setp.ge.u32 %p1, %r12, %r46;
  @%p1 bra STORE;
  shl.b32 %r22, %r13, 3;
  add.u32 %r24, %r7, %r22;
FULL:
  mbarrier.try_wait.parity.shared::cta.b64 %p4, [%r24], %r14;
  @!%p4 bra FULL;
  add.u32 %r23, %r8, %r22;
  mbarrier.arrive.shared::cta.b64 %rd5, [%r23];
  add.u32 %r12, %r12, 1;
  add.u32 %r13, %r13, 1;
  setp.eq.u32 %p1, %r13, %r4;
  selp.u32 %r13, 0, %r13, %p1;
  xor.b32 %r31, %r14, 1;
  selp.u32 %r14, %r31, %r14, %p1;
  bra CLOOP;
  // Flags bit 6: then write 8 KB (ring slot 0) to out + block * 8 KB with one bulk store and wait
  // for it (with bit 7 only until it has read shared memory), as the GEMM's TMA-store epilogue
  // ends a 64 x 64 bf16 tile.
STORE:
  and.b32 %r43, %r6, 64;
  setp.eq.u32 %p1, %r43, 0;
  @%p1 bra EXIT;
  ld.param.u64 %rd6, [p_out];
  mov.u32 %r42, %ctaid.x;
  mul.wide.u32 %rd7, %r42, 8192;
  add.u64 %rd6, %rd6, %rd7;
  cp.async.bulk.global.shared::cta.bulk_group [%rd6], [%r9], 8192;
  cp.async.bulk.commit_group;
  and.b32 %r43, %r6, 128;
  setp.ne.u32 %p1, %r43, 0;
  @%p1 cp.async.bulk.wait_group.read 0;
  @!%p1 cp.async.bulk.wait_group 0;
EXIT:
  ret;
}
)";

std::string replaceAll(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
  return s;
}

// `entry` with the default L2 policy, named `name`, and with evict_first, named `name`_stream.
// Without the hint each miss may push out one of the benchmark flush's dirty lines, and the read
// pays for that write-back; the GEMM streaming an operand mostly does not, so the faster of the two
// is the fair floor.
std::string bothPolicies(const char* entry, const std::string& name) {
  std::string plain = replaceAll(entry, "@NAME@", name);
  plain = replaceAll(replaceAll(replaceAll(plain, "@POLICY@", ""), "@HINT@", ""), "@POLICY_OPERAND@", "");
  std::string stream = replaceAll(entry, "@NAME@", name + "_stream");
  stream = replaceAll(stream, "@POLICY@", "  .reg .b64 %policy;\n  createpolicy.fractional.L2::evict_first.b64 %policy, 1.0;");
  stream = replaceAll(replaceAll(stream, "@HINT@", ".L2::cache_hint"), "@POLICY_OPERAND@", ", %policy");
  return plain + stream;
}

}  // namespace

std::string readCeilingPtx() {
  std::string ptx = ".version 8.0\n.target sm_90\n.address_size 64\n";
  ptx += ".extern .shared .align 1024 .b8 kiln_read_ring[];\n";
  ptx += ".shared .align 8 .b64 kiln_read_bars[" + std::to_string(kReadTmaMaxStages) + "];\n";
  ptx += ".shared .align 8 .b64 kiln_stream_bars[64];\n";  // full[32], then empty[32]
  return ptx + bothPolicies(kLoadEntry, "kiln_read_ceiling") + bothPolicies(kTmaEntry, "kiln_read_ceiling_tma") +
         kTileEntry;
}

}  // namespace kiln::bench
