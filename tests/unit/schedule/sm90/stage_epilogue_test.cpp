// sm90-stage-epilogue: a staged box's markers have no PTX form, so a kernel whose boxes the pass
// did not expand is refused with a sentence rather than emitted without its stores; once the
// pass has run, the same kernel emits and assembles for sm_90a, its box stored by TMA.
#include <gtest/gtest.h>

#include "backend/assembler.h"
#include "codegen/ptx/emitter.h"
#include "kiln/ir/parser.h"
#include "kiln/ir/verifier.h"
#include "schedule/sm90/passes.h"
#include "kiln/target.h"

namespace kiln {
namespace {

const char* kBox = R"(
kern.kernel() {sym_name = "k", params = ["C", "tmC", "N"], threads = 128, smem_bytes = 32768, grid = [1]} {
^bb0(%C: ptr<bf16>, %tmC: tmap<bf16, [64, 64], tensor = "C", swizzle = 128>, %N: i32):
  %sC = kern.smem_alloc() {offset = 0} : smem<bf16, [1, 64, 64], swizzle = [3, 4, 3]>
  %z = arith.constant() {value = 0} : i32
  %one = arith.constant() {value = 1} : i32
  %tid = kern.thread_id() : i32
  %el = arith.cmpi(%tid, %z) {pred = "eq"} : i1
  %o = kern.smem_offset(%sC, %tid, %z) : i32
  %f = arith.constant() {value = 1.0} : f32
  %p = kern.cvt_pack(%f, %f) : frag<bf16, [2]>
  kern.stage_begin(%sC, %z, %el, %one) {row = 0}
  kern.st_shared(%sC, %z, %o, %p) {row = 0, col = 0}
  kern.stage_end(%tmC, %sC, %z, %N, %z, %el, %one) {row = 0, offset = [64, 0]}
}
)";

TEST(Sm90StageEpilogue, UnexpandedBoxIsRefusedByTheEmitter) {
  ir::DiagnosticEngine diag;
  auto m = ir::parseModule(kBox, diag);
  ASSERT_TRUE(m && ir::verify(*m, diag)) << diag.str();
  EXPECT_FALSE(ptx::emitModule(*m, Target::sm90a(), diag));
  EXPECT_NE(diag.str().find("run that pass first"), std::string::npos) << diag.str();
}

TEST(Sm90StageEpilogue, ExpandedBoxEmitsItsStore) {
  ir::DiagnosticEngine diag;
  auto m = ir::parseModule(kBox, diag);
  ASSERT_TRUE(m && ir::verify(*m, diag)) << diag.str();
  ASSERT_TRUE(sm90::stageEpiloguePass(*m, diag)) << diag.str();
  ASSERT_TRUE(ir::verify(*m, diag)) << diag.str();
  auto ptx = ptx::emitModule(*m, Target::sm90a(), diag);
  ASSERT_TRUE(ptx) << diag.str();
  EXPECT_NE(ptx->find("cp.async.bulk.tensor.2d.global.shared::cta"), std::string::npos) << *ptx;
  EXPECT_NE(ptx->find("fence.proxy.async"), std::string::npos) << *ptx;
  auto cubin = backend::assemble(*ptx, Target::sm90a().ptxTarget, diag);
  EXPECT_TRUE(cubin) << diag.str() << "\n" << *ptx;
}

}  // namespace
}  // namespace kiln
