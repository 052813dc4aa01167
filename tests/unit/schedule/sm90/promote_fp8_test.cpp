// sm90-promote-fp8: a wgmma still marked {accumulate} has no PTX form (the program asked for f32
// sums, and the fast form would silently drop them), so a K loop the pass did not rewrite is
// refused by the emitter with a sentence; once the pass has run, the same kernel emits and
// assembles for sm_90a, every wgmma group waited for inside its iteration.
#include <gtest/gtest.h>

#include "backend/assembler.h"
#include "codegen/ptx/emitter.h"
#include "kiln/ir/parser.h"
#include "kiln/ir/printer.h"
#include "kiln/ir/verifier.h"
#include "kiln/target.h"
#include "schedule/sm90/passes.h"

namespace kiln {
namespace {

// The consumer's K loop as the lowering writes it for fp8_accum=promote (one warpgroup, N = 8).
const char* kFastLoop = R"(
kern.kernel() {sym_name = "single", params = ["C", "K"], threads = 256, smem_bytes = 32832, grid = [1]} {
^bb0(%C: ptr<f32>, %K: i32):
  %sA = kern.smem_alloc() {offset = 0} : smem<f8e4m3, [2, 64, 128], swizzle = [3, 4, 3]>
  %sB = kern.smem_alloc() {offset = 16384} : smem<f8e4m3, [2, 64, 128], swizzle = [3, 4, 3]>
  %full = kern.mbarrier_alloc() {offset = 32768} : mbarrier<[2]>
  %empty = kern.mbarrier_alloc() {offset = 32800} : mbarrier<[2]>
  %z = arith.constant() {value = 0} : i32
  %two = arith.constant() {value = 2} : i32
  %lane = kern.lane_id() : i32
  %lane0 = arith.cmpi(%lane, %z) {pred = "eq"} : i1
  %init = arith.constant() {value = 0.0} : f32
  %one = arith.constant() {value = 1} : i32
  %c0, %c1, %c2, %c3, %s_end, %ph_end, %last = scf.for(%z, %K, %one, %init, %init, %init, %init, %z, %z, %z) : f32, f32, f32, f32, i32, i32, i32 {
  ^bb0(%kt: i32, %a0: f32, %a1: f32, %a2: f32, %a3: f32, %s: i32, %ph: i32, %prev: i32):
    kern.mbarrier_wait(%full, %s, %ph)
    kern.wgmma_fence()
    %on = arith.constant() {value = true} : i1
    %db = kern.wgmma_desc(%sB, %s, %z) {row = 0, col = 0, major = "k", lbo = 16, sbo = 1024} : i64
    %da = kern.wgmma_desc(%sA, %s, %z) {row = 0, col = 0, major = "k", lbo = 16, sbo = 1024} : i64
    %d0, %d1, %d2, %d3 = kern.wgmma(%on, %da, %db, %a0, %a1, %a2, %a3) {shape = [64, 8, 32], ab = "f8e4m3", trans_b = false, accumulate = "promote"} : f32, f32, f32, f32
    %db2 = kern.wgmma_desc(%sB, %s, %z) {row = 0, col = 32, major = "k", lbo = 16, sbo = 1024} : i64
    %da2 = kern.wgmma_desc(%sA, %s, %z) {row = 0, col = 32, major = "k", lbo = 16, sbo = 1024} : i64
    %e0, %e1, %e2, %e3 = kern.wgmma(%on, %da2, %db2, %d0, %d1, %d2, %d3) {shape = [64, 8, 32], ab = "f8e4m3", trans_b = false, accumulate = "promote"} : f32, f32, f32, f32
    kern.wgmma_commit()
    kern.wgmma_wait() {pending = 1}
    %later = arith.cmpi(%kt, %z) {pred = "sgt"} : i1
    %rel = arith.andi(%later, %lane0) : i1
    scf.if(%rel) {
      kern.mbarrier_arrive(%empty, %prev)
      scf.yield()
    } {
      scf.yield()
    }
    %s1 = arith.addi(%s, %one) : i32
    %wrap = arith.cmpi(%s1, %two) {pred = "eq"} : i1
    %s2 = arith.select(%wrap, %z, %s1) : i32
    %flip = arith.xori(%ph, %one) : i32
    %ph2 = arith.select(%wrap, %flip, %ph) : i32
    scf.yield(%e0, %e1, %e2, %e3, %s2, %ph2, %s)
  }
  kern.wgmma_wait() {pending = 0}
  scf.if(%lane0) {
    kern.mbarrier_arrive(%empty, %last)
    scf.yield()
  } {
    scf.yield()
  }
  %sum = arith.addf(%c0, %c3) : f32
  kern.st_global(%C, %lane0, %sum)
}
)";

TEST(Sm90PromoteFp8, MarkedWgmmaIsRefusedByTheEmitter) {
  ir::DiagnosticEngine diag;
  auto m = ir::parseModule(kFastLoop, diag);
  ASSERT_TRUE(m && ir::verify(*m, diag)) << diag.str();
  EXPECT_FALSE(ptx::emitModule(*m, Target::sm90a(), diag));
  EXPECT_NE(diag.str().find("cannot emit PTX for 'kern.wgmma': {accumulate = \"promote\"} asks for FP8 sums promoted "
                            "to f32 registers, which sm90-promote-fp8 writes into the K loop; run that pass first (the "
                            "sm90 pipeline does), on a K loop of the shape it rewrites"),
            std::string::npos)
      << diag.str();
}

TEST(Sm90PromoteFp8, PromotedLoopEmitsAndAssembles) {
  ir::DiagnosticEngine diag;
  auto m = ir::parseModule(kFastLoop, diag);
  ASSERT_TRUE(m && ir::verify(*m, diag)) << diag.str();
  ASSERT_TRUE(sm90::promoteFp8Pass(*m, diag)) << diag.str();
  ASSERT_TRUE(ir::verify(*m, diag)) << diag.str();
  EXPECT_EQ(ir::toString(*m).find("accumulate"), std::string::npos) << ir::toString(*m);
  auto ptx = ptx::emitModule(*m, Target::sm90a(), diag);
  ASSERT_TRUE(ptx) << diag.str();
  // The step's sums start from zero (scale_d = false, a predicate register) and are waited for
  // before they are added.
  EXPECT_NE(ptx->find("wgmma.wait_group.sync.aligned 0"), std::string::npos) << *ptx;
  EXPECT_EQ(ptx->find("wgmma.wait_group.sync.aligned 1"), std::string::npos) << *ptx;
  EXPECT_NE(ptx->find("add.rn.f32"), std::string::npos) << *ptx;
  auto cubin = backend::assemble(*ptx, Target::sm90a().ptxTarget, diag);
  EXPECT_TRUE(cubin) << diag.str() << "\n" << *ptx;
}

}  // namespace
}  // namespace kiln
