// Every scalar conversion arith.cast emits assembles at the lowest target Kiln claims (sm_80),
// under the .version the module header states: the header must cover every instruction used
// (cvt.f32.bf16 needs PTX 7.1, above sm_80's 7.0, and ptxas used to reject it once per cast).
#include <gtest/gtest.h>

#include "backend/assembler.h"
#include "codegen/ptx/emitter.h"
#include "kiln/ir/parser.h"
#include "kiln/ir/verifier.h"
#include "kiln/target.h"

namespace kiln {
namespace {

const char* kCasts = R"(
kern.kernel() {sym_name = "casts", params = ["H", "F", "W", "N"], threads = 32, smem_bytes = 0, grid = [["N", 32]]} {
^bb0(%H: ptr<bf16>, %F: ptr<f16>, %W: ptr<f32>, %N: i32):
  %tid = kern.thread_id() : i32
  %ok = arith.cmpi(%tid, %N) {pred = "slt"} : i1
  %h = kern.ld_global(%H, %ok) : bf16
  %f16 = kern.ld_global(%F, %ok) : f16
  %a = arith.cast(%h) : f32
  %b = arith.cast(%f16) : f32
  %s = arith.addf(%a, %b) : f32
  %i = arith.cast(%s) : i32
  %l = arith.cast(%i) : i64
  %i2 = arith.cast(%l) : i32
  %p = arith.cast(%i2) : i1
  %j = arith.cast(%p) : i32
  %g = arith.cast(%j) : f32
  %hb = arith.cast(%g) : bf16
  %hf = arith.cast(%g) : f16
  kern.st_global(%H, %ok, %hb)
  kern.st_global(%F, %ok, %hf)
  kern.st_global(%W, %ok, %g)
}
)";

TEST(EmitCast, EveryConversionAssemblesOnSm80UnderTheHeadersVersion) {
  ir::DiagnosticEngine diag;
  auto m = ir::parseModule(kCasts, diag);
  ASSERT_TRUE(m && ir::verify(*m, diag)) << diag.str();
  auto ptx = ptx::emitModule(*m, Target::sm80(), diag);
  ASSERT_TRUE(ptx) << diag.str();
  ASSERT_NE(ptx->find("cvt.f32.bf16"), std::string::npos) << *ptx;
  EXPECT_NE(ptx->find(".version 7.1\n"), std::string::npos) << "cvt.f32.bf16 needs PTX 7.1";
  auto cubin = backend::assemble(*ptx, Target::sm80().ptxTarget, diag);
  EXPECT_TRUE(cubin) << diag.str() << "\n" << *ptx;
}

}  // namespace
}  // namespace kiln
