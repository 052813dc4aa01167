#pragma once
// Hand-written PTX kernels shared by the backend tests. Each exists to provoke one thing from ptxas.
#include <string>
#include <string_view>

namespace kiln::backend::testing {

// PTX ISA 8.8 is the first to accept every target Kiln supports (sm_100a and sm_120 included).
inline std::string header(std::string_view target) {
  return ".version 8.8\n.target " + std::string(target) + "\n.address_size 64\n\n";
}

// Two entries: `with_stack` indexes a 256-byte local array with a run-time index, which ptxas
// cannot promote to registers (a 256-byte stack frame); `no_stack` touches no local memory.
inline std::string stackKernels(std::string_view target) {
  return header(target) + R"(.visible .entry with_stack(.param .u64 out, .param .u32 idx)
{
  .local .align 4 .b8 buf[256];
  .reg .b64 %rd<6>;
  .reg .b32 %r<8>;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r1, [idx];
  mov.u32 %r2, %tid.x;
  mov.u64 %rd2, buf;
  cvta.local.u64 %rd2, %rd2;
  and.b32 %r3, %r2, 63;
  mul.wide.u32 %rd3, %r3, 4;
  add.u64 %rd4, %rd2, %rd3;
  st.u32 [%rd4], %r2;
  and.b32 %r4, %r1, 63;
  mul.wide.u32 %rd3, %r4, 4;
  add.u64 %rd4, %rd2, %rd3;
  ld.u32 %r5, [%rd4];
  cvta.to.global.u64 %rd5, %rd1;
  st.global.u32 [%rd5], %r5;
  ret;
}

.visible .entry no_stack(.param .u64 out)
{
  .reg .b64 %rd<3>;
  .reg .b32 %r<3>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  cvta.to.global.u64 %rd2, %rd1;
  st.global.u32 [%rd2], %r1;
  ret;
}
)";
}

// One ldmatrix .x4 for A, one ldmatrix .x4.trans for B, two m16n8k16 BF16 MMAs, and a store
// guarded by a predicate. Expected SASS: LDSM.16.M88.4 x1, LDSM.16.MT88.4 x1,
// HMMA.16816.F32.BF16 x2, and a predicated instruction (the guard becomes "@P0 EXIT").
inline std::string mmaKernel(std::string_view target) {
  return header(target) + R"(.visible .entry mma_kernel(.param .u64 out, .param .u32 n)
{
  .shared .align 16 .b8 tileA[512];
  .shared .align 16 .b8 tileB[512];
  .reg .pred %p<2>;
  .reg .b32 %a<4>;
  .reg .b32 %b<4>;
  .reg .f32 %c<8>;
  .reg .b32 %r<8>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r6, [n];
  mov.u32 %r1, %tid.x;
  and.b32 %r2, %r1, 15;
  shl.b32 %r2, %r2, 4;
  mov.u32 %r3, tileA;
  add.u32 %r3, %r3, %r2;
  mov.u32 %r4, tileB;
  add.u32 %r4, %r4, %r2;
  ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%a0, %a1, %a2, %a3}, [%r3];
  ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%b0, %b1, %b2, %b3}, [%r4];
  mov.f32 %c0, 0f00000000;
  mov.f32 %c1, 0f00000000;
  mov.f32 %c2, 0f00000000;
  mov.f32 %c3, 0f00000000;
  mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%c0, %c1, %c2, %c3}, {%a0, %a1, %a2, %a3}, {%b0, %b1}, {%c0, %c1, %c2, %c3};
  mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%c4, %c5, %c6, %c7}, {%a0, %a1, %a2, %a3}, {%b2, %b3}, {%c0, %c1, %c2, %c3};
  setp.lt.u32 %p1, %r1, %r6;
  mul.wide.u32 %rd2, %r1, 16;
  cvta.to.global.u64 %rd3, %rd1;
  add.u64 %rd3, %rd3, %rd2;
  @%p1 st.global.v4.f32 [%rd3], {%c4, %c5, %c6, %c7};
  ret;
}
)";
}

// The comments are what Kiln's PTX emitter writes before each op's instructions. The store uses
// the undeclared register %r9 after the kern.store comment, which ptxas rejects.
inline std::string brokenKernel() {
  return header("sm_80") + R"(.visible .entry broken(.param .u64 out)
{
  .reg .b64 %rd<3>;
  .reg .b32 %r<3>;
  // kiln: kern.load_param at gemm.kiln:3:5
  ld.param.u64 %rd1, [out];
  // kiln: kern.thread_id at gemm.kiln:4:7
  mov.u32 %r1, %tid.x;
  // kiln: kern.store at gemm.kiln:5:9
  cvta.to.global.u64 %rd2, %rd1;
  st.global.u32 [%rd2], %r9;
  ret;
}
)";
}

// A kernel that asks for more registers with setmaxnreg (sm_90a). With .maxnreg, whole-program
// ptxas honours it (USETMAXREG in the SASS); nvJitLink's relocatable ptxas ignores it with a
// "(C7504) Potential Performance Loss" advisory.
inline std::string setmaxnregKernel() {
  return header("sm_90a") + R"(.visible .entry grow(.param .u64 out)
.maxntid 256, 1, 1
.maxnreg 168
{
  .shared .align 16 .b8 sbuf[4096];
  .reg .b64 %rd<4>;
  .reg .b32 %r<4>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  // kiln: kern.setmaxnreg at ws.kiln:12:3
  setmaxnreg.inc.sync.aligned.u32 240;
  mov.u32 %r2, sbuf;
  st.shared.u32 [%r2], %r1;
  bar.sync 0;
  ld.shared.u32 %r3, [%r2+4];
  cvta.to.global.u64 %rd2, %rd1;
  st.global.u32 [%rd2], %r3;
  ret;
}
)";
}

}  // namespace kiln::backend::testing
