// The PTX of the row kernels' ops (vector loads of packed words, packing and unpacking, shuffles,
// shared scalars, the grid size, float comparisons, the math functions) assembles at the lowest
// target that claims each: sm_80 for everything but the FP8 conversions, sm_89 for those, and the
// FP8 conversions are refused on sm_80 with a sentence.
#include <gtest/gtest.h>

#include "backend/assembler.h"
#include "codegen/ptx/emitter.h"
#include "kiln/ir/parser.h"
#include "kiln/ir/verifier.h"
#include "target/target.h"

namespace kiln {
namespace {

const char* kCommon = R"(
kern.kernel() {sym_name = "k", params = ["X", "Y", "C", "N"], threads = 64, smem_bytes = 128, grid = [["N", 64]]} {
^bb0(%X: ptr<bf16>, %Y: ptr<bf16>, %C: ptr<f32>, %N: i32):
  %nb = kern.grid_dim() {dim = "x"} : i32
  %tid = kern.thread_id() : i32
  %ok = arith.cmpi(%tid, %N) {pred = "slt"} : i1
  %w0, %w1, %w2, %w3 = kern.ld_global(%X, %ok) : frag<bf16, [2]>, frag<bf16, [2]>, frag<bf16, [2]>, frag<bf16, [2]>
  %a, %b = kern.cvt_unpack(%w0) : f32, f32
  %s = arith.addf(%a, %b) : f32
  %o = kern.shfl_xor(%s) {offset = 16} : f32
  %ne = arith.cmpf(%o, %s) {pred = "ne"} : i1
  %m = arith.select(%ne, %o, %s) : f32
  %e = math.exp2(%m) : f32
  %l = math.log2(%e) : f32
  %q = math.sqrt(%l) : f32
  %r = math.rsqrt(%q) : f32
  %f = math.erf(%r) : f32
  %buf = kern.smem_alloc() {offset = 0} : smem<f32, [1, 1, 32]>
  %z = arith.constant() {value = 0} : i32
  %off = kern.smem_offset(%buf, %z, %tid) : i32
  kern.st_shared(%buf, %z, %off, %f) {row = 0, col = 0}
  kern.barrier()
  %g = kern.ld_shared(%buf, %z, %off) {row = 0, col = 1} : f32
  %pk = kern.cvt_pack(%g, %a) : frag<bf16, [2]>
  kern.st_global(%Y, %ok, %pk, %w1, %w2, %w3)
  %x16 = kern.ld_global(%Y, %ok) : bf16
  %y16 = kern.cvt_unpack(%x16) : f32
  %one16 = kern.cvt_pack(%y16) : bf16
  kern.st_global(%Y, %ok, %one16)
  %v0, %v1, %v2, %v3 = kern.ld_global(%C, %ok) : f32, f32, f32, f32
  %c = arith.addf(%v0, %g) : f32
  kern.st_global(%C, %ok, %c, %v1, %v2, %v3)
}
)";

const char* kFp8 = R"(
kern.kernel() {sym_name = "k8", params = ["Q", "N"], threads = 32, smem_bytes = 0, grid = [["N", 32]]} {
^bb0(%Q: ptr<f8e4m3>, %N: i32):
  %tid = kern.thread_id() : i32
  %ok = arith.cmpi(%tid, %N) {pred = "slt"} : i1
  %w = kern.ld_global(%Q, %ok) : frag<f8e4m3, [4]>
  %a, %b, %c, %d = kern.cvt_unpack(%w) : f32, f32, f32, f32
  %p = kern.cvt_pack(%d, %c, %b, %a) : frag<f8e4m3, [4]>
  kern.st_global(%Q, %ok, %p)
  %one = kern.ld_global(%Q, %ok) : f8e4m3
  %x = kern.cvt_unpack(%one) : f32
  %back = kern.cvt_pack(%x) : f8e4m3
  kern.st_global(%Q, %ok, %back)
}
)";

std::optional<std::string> ptxFor(const char* text, const Target& t, ir::DiagnosticEngine& diag) {
  auto m = ir::parseModule(text, diag);
  if (!m || !ir::verify(*m, diag)) return std::nullopt;
  return ptx::emitModule(*m, t, diag);
}

TEST(EmitVectorOps, AssembleForSm80) {
  ir::DiagnosticEngine diag;
  auto ptx = ptxFor(kCommon, Target::sm80(), diag);
  ASSERT_TRUE(ptx) << diag.str();
  EXPECT_NE(ptx->find("shfl.sync.bfly.b32"), std::string::npos);
  EXPECT_NE(ptx->find("ld.global.v4.b32"), std::string::npos);
  EXPECT_NE(ptx->find("ld.shared.f32"), std::string::npos);
  EXPECT_NE(ptx->find("setp.neu.f32"), std::string::npos);
  EXPECT_NE(ptx->find("mov.u32 %r"), std::string::npos);
  EXPECT_EQ(ptx->find("cvt.f32.bf16"), std::string::npos) << "bf16 widens by a shift, not a PTX 7.8 cvt";
  auto cubin = backend::assemble(*ptx, Target::sm80().ptxTarget, diag);
  EXPECT_TRUE(cubin) << diag.str() << "\n" << *ptx;
}

TEST(EmitVectorOps, Fp8ConversionsAssembleForSm89) {
  ir::DiagnosticEngine diag;
  auto ptx = ptxFor(kFp8, Target::sm89(), diag);
  ASSERT_TRUE(ptx) << diag.str();
  EXPECT_NE(ptx->find("cvt.rn.satfinite.e4m3x2.f32"), std::string::npos);
  EXPECT_NE(ptx->find("cvt.rn.f16x2.e4m3x2"), std::string::npos);
  auto cubin = backend::assemble(*ptx, Target::sm89().ptxTarget, diag);
  EXPECT_TRUE(cubin) << diag.str() << "\n" << *ptx;
}

TEST(EmitVectorOps, Fp8ConversionsAreRefusedOnSm80) {
  ir::DiagnosticEngine diag;
  EXPECT_FALSE(ptxFor(kFp8, Target::sm80(), diag));
  EXPECT_NE(diag.str().find("FP8 conversions (cvt ...e4m3x2 / e5m2x2) need sm_89 or newer; sm_80 has none"),
            std::string::npos)
      << diag.str();
}

}  // namespace
}  // namespace kiln
