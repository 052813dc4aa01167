#include "bench/read_ceiling.h"

#include "bench/bench_support.h"

#include <algorithm>
#include <string>

#include "kiln/runtime/launcher.h"
#include "kiln/runtime/module.h"
#include "kiln/runtime/stream.h"

namespace kiln::bench {
namespace {

// Grid-stride over 16-byte vectors, four independent loads in flight per thread and iteration,
// XOR-folded into one register. The fold is stored only when it equals a constant, so the loads
// cannot be removed and (for any real input) nothing is written: the kernel's DRAM traffic is
// its reads. Consecutive threads read consecutive vectors, so every warp load is 512 contiguous
// bytes. @NAME@, @POLICY@ and @HINT@ are filled in per L2 policy (readPtx below).
constexpr const char* kReadEntry = R"(
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

std::string replaceAll(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
  return s;
}

// Two entries: kiln_read_ceiling loads with the default L2 policy; kiln_read_ceiling_stream marks
// every line it brings in evict_first, as the GEMM's l2_hint=reuse does for an operand that it
// streams. Without the hint each miss may push out one of the benchmark flush's dirty lines, and
// the read pays for that write-back (tens of MB at 64x5120x5120); the GEMM with the hint mostly
// does not, so the faster of the two is the fair floor.
std::string readPtx() {
  std::string ptx = ".version 8.0\n.target sm_90\n.address_size 64\n";
  std::string plain = replaceAll(kReadEntry, "@NAME@", "kiln_read_ceiling");
  plain = replaceAll(replaceAll(replaceAll(plain, "@POLICY@", ""), "@HINT@", ""), "@POLICY_OPERAND@", "");
  std::string stream = replaceAll(kReadEntry, "@NAME@", "kiln_read_ceiling_stream");
  stream = replaceAll(stream, "@POLICY@", "  .reg .b64 %policy;\n  createpolicy.fractional.L2::evict_first.b64 %policy, 1.0;");
  stream = replaceAll(replaceAll(stream, "@HINT@", ".L2::cache_hint"), "@POLICY_OPERAND@", ", %policy");
  return ptx + plain + stream;
}

}  // namespace

struct ReadCeiling::Impl {
  runtime::Context ctx;
  runtime::Module module;
  runtime::Function plain, stream;
  int sms;
  explicit Impl(const runtime::Context& c)
      : ctx(c),
        module(runtime::Module::load(c, readPtx(), "read ceiling")),
        plain(module.function("kiln_read_ceiling")),
        stream(module.function("kiln_read_ceiling_stream")),
        sms(c.properties().smCount) {}
};

ReadCeiling::ReadCeiling(const runtime::Context& ctx) : impl_(std::make_unique<Impl>(ctx)) {}
ReadCeiling::~ReadCeiling() = default;

ReadCeiling::Result ReadCeiling::measure(size_t bytes, int warmup, int reps) {
  bytes &= ~size_t(15);
  DeviceBuffer src(bytes), out(4);
  check(cudaMemset(src.ptr, 1, bytes), "read-ceiling source");
  uint64_t srcPtr = uint64_t(src.ptr), n16 = bytes / 16, outPtr = uint64_t(out.ptr);
  Result best;
  best.ms = best.plainMs = 1e30;
  for (bool evictFirst : {false, true}) {
    const runtime::Function& fn = evictFirst ? impl_->stream : impl_->plain;
    for (int blocksPerSm : {2, 4, 8}) {
      runtime::Dim3 grid{uint32_t(impl_->sms * blocksPerSm)}, block{512};
      double ms = medianMs(
          [&](cudaStream_t st) {
            runtime::launch(fn, grid, block, {}, 0, runtime::Stream::adopt(impl_->ctx, CUstream(st)),
                            {&srcPtr, &n16, &outPtr});
          },
          warmup, reps, nullptr);
      if (!evictFirst) best.plainMs = std::min(best.plainMs, ms);
      if (ms < best.ms) {
        best.ms = ms;
        best.blocksPerSm = blocksPerSm;
        best.evictFirst = evictFirst;
      }
    }
  }
  return best;
}

}  // namespace kiln::bench
