#include "bench/read_ceiling.h"

#include "bench/bench_support.h"
#include "kiln/runtime/launcher.h"
#include "kiln/runtime/module.h"
#include "kiln/runtime/stream.h"

namespace kiln::bench {
namespace {

// Grid-stride over 16-byte vectors, four independent loads in flight per thread and iteration,
// XOR-folded into one register. The fold is stored only when it equals a constant, so the loads
// cannot be removed and (for any real input) nothing is written: the kernel's DRAM traffic is
// its reads. Consecutive threads read consecutive vectors, so every warp load is 512 contiguous
// bytes.
constexpr const char* kReadPtx = R"(.version 8.0
.target sm_90
.address_size 64

.visible .entry kiln_read_ceiling(.param .u64 p_src, .param .u64 p_n16, .param .u64 p_out)
{
  .reg .pred %p<3>;
  .reg .b32 %r<32>;
  .reg .b64 %rd<16>;
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
  ld.global.nc.L1::no_allocate.v4.u32 {%r11, %r12, %r13, %r14}, [%rd10];
  add.u64 %rd12, %rd10, %rd11;
  ld.global.nc.L1::no_allocate.v4.u32 {%r15, %r16, %r17, %r18}, [%rd12];
  add.u64 %rd12, %rd12, %rd11;
  ld.global.nc.L1::no_allocate.v4.u32 {%r19, %r20, %r21, %r22}, [%rd12];
  add.u64 %rd12, %rd12, %rd11;
  ld.global.nc.L1::no_allocate.v4.u32 {%r23, %r24, %r25, %r26}, [%rd12];
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
  ld.global.nc.L1::no_allocate.v4.u32 {%r11, %r12, %r13, %r14}, [%rd10];
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

}  // namespace

struct ReadCeiling::Impl {
  runtime::Context ctx;
  runtime::Module module;
  runtime::Function fn;
  int sms;
  explicit Impl(const runtime::Context& c)
      : ctx(c),
        module(runtime::Module::load(c, kReadPtx, "read ceiling")),
        fn(module.function("kiln_read_ceiling")),
        sms(c.properties().smCount) {}
};

ReadCeiling::ReadCeiling(const runtime::Context& ctx) : impl_(std::make_unique<Impl>(ctx)) {}
ReadCeiling::~ReadCeiling() = default;

ReadCeiling::Result ReadCeiling::measure(size_t bytes, int warmup, int reps) {
  bytes &= ~size_t(15);
  DeviceBuffer src(bytes), out(4);
  check(cudaMemset(src.ptr, 1, bytes), "read-ceiling source");
  uint64_t srcPtr = uint64_t(src.ptr), n16 = bytes / 16, outPtr = uint64_t(out.ptr);
  Result best{1e30, 0};
  for (int blocksPerSm : {2, 4, 8}) {
    runtime::Dim3 grid{uint32_t(impl_->sms * blocksPerSm)}, block{512};
    double ms = medianMs(
        [&](cudaStream_t st) {
          runtime::launch(impl_->fn, grid, block, {}, 0, runtime::Stream::adopt(impl_->ctx, CUstream(st)),
                          {&srcPtr, &n16, &outPtr});
        },
        warmup, reps, nullptr);
    if (ms < best.ms) best = {ms, blocksPerSm};
  }
  return best;
}

}  // namespace kiln::bench
