// The epilogue's load addresses (sm80_epilogue_address.h): a fragment position x + k on an axis of
// compile-time stride becomes one widened base and an immediate, and the loads it makes read
// exactly the elements the plain offset names, masked ones touching nothing (run through the kern
// simulator, which reports any access outside a buffer).
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "kiln/ir/parser.h"
#include "schedule/sm80_epilogue_address.h"
#include "tests/unit/testing/kern_sim.h"

namespace kiln::sm80 {
namespace {
using namespace ir;

// Thread t of 32 copies src[t + k] (src a [n] or, with rows, a [rows, n] row-major tensor read at
// row 1) to dst[t] where t + k < n, through loadAddress; `split` says whether the address
// came out as (base + widened t) + immediate.
struct Copy {
  std::vector<float> dst;
  std::string err;
  bool split = false;
};

Copy copyThrough(int k, int n, int rows) {
  const char* text = R"(kern.kernel() {sym_name = "k", params = ["src", "dst", "n"], threads = 32, smem_bytes = 0, grid = [1]} {
^bb0(%src: ptr<f32>, %dst: ptr<f32>, %n: i32):
  %t = kern.thread_id() : i32
}
)";
  DiagnosticEngine diag;
  auto module = parseModule(text, diag);
  Copy out;
  if (!module) return {{}, "parse: " + diag.str(), false};
  Operation* kernel = module->body().front();
  Block& body = kernel->region(0).front();
  KernBuilder b(&body);
  Value* src = body.argument(0);
  Value* dst = body.argument(1);
  Value* nArg = body.argument(2);
  Value* t = body.operations().back()->result(0);
  Value* col = b.addConst(t, k);
  Type type = rows ? Type::make("tensor", ScalarType::F32, Shape{Extent::of(rows), Extent::of("n")})
                   : Type::make("tensor", ScalarType::F32, Shape{Extent::of("n")});
  // Row 1 as 0 + 1 (t / 64 is 0 for every thread): a sum on the slow axis, whose stride is n.
  Value* row = b.addConst(b.div(t, b.i32(64)), 1);
  std::vector<Value*> pos = rows ? std::vector<Value*>{row, col} : std::vector<Value*>{col};
  ExtentValue extent = [&](const Extent& e) { return e.isSymbolic() ? nArg : b.i32(e.value); };
  Value* at = loadAddress(b, src, type, pos, extent);
  const Operation* d = at->definingOp();
  out.split = d->is("kern.ptr_add") && KernBuilder::intConstant(d->operand(1)) == int64_t(k);
  Value* ok = b.cmp("slt", col, nArg);
  Value* v = b.op1("kern.ld_global", {at, ok}, Type::scalar(ScalarType::F32), {{"other", -1.0}});
  b.create("kern.st_global", {b.ptrAdd(dst, b.cast(t, types::i64())), b.i1(true), v}, {});

  testing::GlobalMemory mem;
  std::vector<float> values(size_t((rows ? rows : 1) * n));
  for (size_t i = 0; i < values.size(); ++i) values[i] = float(i);
  std::vector<uint8_t> srcBytes(values.size() * 4), dstBytes(32 * 4, 0);
  std::memcpy(srcBytes.data(), values.data(), srcBytes.size());
  uint64_t s = mem.add(srcBytes), dd = mem.add(dstBytes);
  testing::SimLaunch launch;
  launch.kernel = kernel;
  launch.args = {s, dd, uint64_t(n)};
  out.err = testing::simulate(launch, mem);
  out.dst.resize(32);
  std::memcpy(out.dst.data(), mem.at(dd).data(), 32 * 4);
  return out;
}

TEST(EpilogueLoadAddress, AFragmentColumnIsOneBaseAndAnImmediate) {
  Copy c = copyThrough(8, 48, 0);
  ASSERT_EQ(c.err, "");
  EXPECT_TRUE(c.split) << "the constant 8 of t + 8 should be the last ptr_add's offset";
  for (int t = 0; t < 32; ++t) EXPECT_EQ(c.dst[size_t(t)], float(t + 8)) << "thread " << t;
}

TEST(EpilogueLoadAddress, MaskedLoadsPastTheEndTouchNothing) {
  // n = 20: threads 12.. are masked off; their widened address (src + t + 8) lies past the buffer.
  Copy c = copyThrough(8, 20, 0);
  ASSERT_EQ(c.err, "");
  for (int t = 0; t < 32; ++t) EXPECT_EQ(c.dst[size_t(t)], t + 8 < 20 ? float(t + 8) : -1.0f) << "thread " << t;
}

TEST(EpilogueLoadAddress, TheSlowAxisOfASymbolicStrideKeepsItsSum) {
  // [3, n] row-major, row 1: the column's constant becomes the immediate; the row's sum stays an
  // i32 sum multiplied by the symbolic n at run time (its stride is not a compile-time constant).
  Copy c = copyThrough(4, 40, 3);
  ASSERT_EQ(c.err, "");
  EXPECT_TRUE(c.split);
  for (int t = 0; t < 32; ++t) EXPECT_EQ(c.dst[size_t(t)], float(40 + t + 4)) << "thread " << t;
}

}  // namespace
}  // namespace kiln::sm80
