// The sm80_multistage lowering, run on the CPU by the kern IR simulator (tests/unit/testing):
// every element of C is checked against a double-precision reference, with ragged M, N and K,
// both B layouts, the grouped raster, a fused epilogue, and both cp.async timings (Early catches
// a copy into a slot that is still being read, Late a read of a slot not yet waited for). Outputs
// start poisoned and a guard after C must stay untouched; unwritten shared memory reads as NaN.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <sstream>

#include "examples/examples.h"
#include "kiln/compile.h"
#include "kiln/float_formats.h"
#include "kiln/ir/parser.h"
#include "ops/gemm_bf16.h"
#include "tests/unit/testing/kern_sim.h"
#include "tests/unit/testing/seeded_inputs.h"

namespace kiln {
namespace {

struct Problem {
  int64_t m, n, k;
  bool kMajor = false;
  bool biasGelu = false;
  int64_t batch = 0;  // > 0: a batched program with dim "B"
};

constexpr uint16_t kPoison = 0xFFC1;
constexpr int64_t kGuard = 64;

std::vector<uint8_t> bytesOf(const std::vector<uint16_t>& v) {
  std::vector<uint8_t> b(v.size() * 2);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

// `drop`, when given, removes every line of the kern IR that contains it before simulating, and the
// simulator must then report a shared-memory race instead of running.
void check(const ir::Module& program, const Config& config, const Problem& p, testing::CopyTiming timing,
           const std::string& drop = "") {
  ir::DiagnosticEngine diag;
  auto r = compile(program, Target::sm80(), config, diag);
  ASSERT_TRUE(r) << diag.str();
  std::string text = r->kernIr;
  if (!drop.empty()) {
    std::istringstream in(r->kernIr);
    text.clear();
    for (std::string line; std::getline(in, line);)
      if (line.find(drop) == std::string::npos) text += line + "\n";
    ASSERT_NE(text, r->kernIr) << "no line contains " << drop;
  }
  auto kern = ir::parseModule(text, diag);
  ASSERT_TRUE(kern) << diag.str();
  const ir::Operation* kernel = kern->body().front();
  std::map<std::string, int64_t> dims = {{"M", p.m}, {"N", p.n}, {"K", p.k}};
  int64_t nb = std::max<int64_t>(1, p.batch);
  if (p.batch) dims["B"] = p.batch;
  ASSERT_TRUE(r->launch.validate(dims, diag)) << diag.str();

  testing::SeededInputs inputs(uint32_t(p.m * 131 + p.n * 7 + p.k));
  auto a = inputs.bf16(size_t(nb * p.m * p.k)), b = inputs.bf16(size_t(nb * p.k * p.n));
  std::vector<float> bias(size_t(p.n));
  for (auto& x : bias) x = inputs.uniform();

  testing::GlobalMemory mem;
  uint64_t da = mem.add(bytesOf(a)), db = mem.add(bytesOf(b));
  std::vector<uint8_t> biasBytes(bias.size() * 4);
  std::memcpy(biasBytes.data(), bias.data(), biasBytes.size());
  uint64_t dbias = mem.add(biasBytes);
  uint64_t dc = mem.add(bytesOf(std::vector<uint16_t>(size_t(nb * p.m * p.n + kGuard), kPoison)));

  testing::SimLaunch launch;
  launch.kernel = kernel;
  launch.timing = timing;
  for (const auto& prm : r->launch.params) {
    if (prm.kind == KernelParam::Kind::Pointer)
      launch.args.push_back(prm.name == "A" ? da : prm.name == "B" ? db : prm.name == "bias" ? dbias : dc);
    else
      launch.args.push_back(uint32_t(int32_t(dims.at(prm.name))));
  }
  auto grid = r->launch.gridFor(dims);
  for (int i = 0; i < 3; ++i) launch.grid[i] = uint32_t(grid[size_t(i)]);
  std::string err = testing::simulate(launch, mem);
  if (!drop.empty()) {
    EXPECT_NE(err.find("shared-memory race"), std::string::npos) << err;
    return;
  }
  ASSERT_EQ(err, "");

  std::vector<uint16_t> c(size_t(nb * p.m * p.n + kGuard));
  std::memcpy(c.data(), mem.at(dc).data(), c.size() * 2);
  int bad = 0;
  for (int64_t bi = 0; bi < nb; ++bi)
  for (int64_t i = 0; i < p.m && bad < 5; ++i)
    for (int64_t j = 0; j < p.n && bad < 5; ++j) {
      double acc = 0;
      const uint16_t* ab = a.data() + bi * p.m * p.k;
      const uint16_t* bb = b.data() + bi * p.k * p.n;
      for (int64_t kk = 0; kk < p.k; ++kk)
        acc += double(bf16BitsToFloat(ab[size_t(i * p.k + kk)])) *
               double(bf16BitsToFloat(bb[size_t(p.kMajor ? j * p.k + kk : kk * p.n + j)]));
      double ref = acc;
      if (p.biasGelu) {
        double x = acc + bias[size_t(j)];
        ref = 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
      }
      double got = bf16BitsToFloat(c[size_t((bi * p.m + i) * p.n + j)]);
      double tol = std::fabs(ref) / 128 + 1e-3 * std::sqrt(double(p.k));
      if (!(std::fabs(got - ref) <= tol)) {
        ++bad;
        ADD_FAILURE() << r->launch.kernelName << " [" << config.str() << "] " << p.m << "x" << p.n << "x" << p.k
                      << ": C[" << bi << "][" << i << "][" << j << "] = " << got << ", expected " << ref;
      }
    }
  for (size_t i = size_t(nb * p.m * p.n); i < c.size(); ++i)
    if (c[i] != kPoison) {
      ADD_FAILURE() << "wrote past the end of C at element " << i;
      break;
    }
}

void checkBoth(const ir::Module& program, const Config& config, const Problem& p) {
  check(program, config, p, testing::CopyTiming::Early);
  check(program, config, p, testing::CopyTiming::Late);
}

TEST(Sm80Functional, EveryTileShapeWithRaggedEdges) {
  for (const char* name : {"bf16_gemm_32x64x32_s2", "bf16_gemm_32x128x32_s3", "bf16_gemm_64x64x32_s4",
                           "bf16_gemm_64x128x32_s3", "bf16_gemm_128x64x32_s2", "bf16_gemm_128x128x32_s3"}) {
    SCOPED_TRACE(name);
    const auto& v = *ops::findGemmBf16Variant(name);
    checkBoth(*v.program(false), v.config, {70, 72, 104});
  }
}

TEST(Sm80Functional, LargerKStepsAndDeepPipelines) {
  for (const char* name : {"bf16_gemm_64x64x64_s4", "bf16_gemm_128x128x64_s3"}) {
    SCOPED_TRACE(name);
    const auto& v = *ops::findGemmBf16Variant(name);
    checkBoth(*v.program(false), v.config, {130, 136, 392});
  }
}

TEST(Sm80Functional, KMajorB) {
  for (const char* name : {"bf16_gemm_32x64x32_s2", "bf16_gemm_128x128x32_s3", "bf16_gemm_64x128x64_s3"}) {
    SCOPED_TRACE(name);
    const auto& v = *ops::findGemmBf16Variant(name);
    checkBoth(*v.program(true), v.config, {33, 150, 72, true});
  }
}

// The simulator runs warps in lockstep, so its barrier-epoch race check is what makes the tests above
// see a missing barrier: without one, the loop must be reported, not silently computed right.
TEST(Sm80Functional, ASimulatedLoopWithoutBarriersIsReportedAsARace) {
  const auto& v = *ops::findGemmBf16Variant("bf16_gemm_64x64x32_s3");
  check(*v.program(false), v.config, {70, 72, 104}, testing::CopyTiming::Early, "kern.barrier()");
  check(*v.program(false), v.config, {70, 72, 104}, testing::CopyTiming::Late, "kern.barrier()");
}

// frag_prefetch=none (the default, a, runs everywhere else): no fragments carried across K tiles,
// with ragged edges, both B layouts, and fewer K tiles than stages.
TEST(Sm80Functional, FragPrefetchNone) {
  for (const char* name : {"bf16_gemm_128x128x32_s3", "bf16_gemm_64x128x64_s3"}) {
    SCOPED_TRACE(name);
    const auto& v = *ops::findGemmBf16Variant(name);
    Config c = v.config;
    c.fragPrefetch = FragPrefetch::None;
    checkBoth(*v.program(false), c, {70, 72, 104});
    checkBoth(*v.program(true), c, {33, 150, 72, true});
    checkBoth(*v.program(false), c, {17, 24, 8});
  }
}

TEST(Sm80Functional, FewerKTilesThanStages) {
  const auto& v = *ops::findGemmBf16Variant("bf16_gemm_64x64x32_s4");
  checkBoth(*v.program(false), v.config, {17, 24, 8});
}

TEST(Sm80Functional, GroupedRaster) {
  const auto& v = *ops::findGemmBf16Variant("bf16_gemm_32x64x32_s3");
  Config c = v.config;
  c.raster = Raster::Grouped;
  c.groupM = 3;
  checkBoth(*v.program(false), c, {200, 136, 40});
}

TEST(Sm80Functional, BatchedGemm) {
  // The example's tensor B and batch dim B share a name; the kernel keeps them apart.
  checkBoth(*examples::batchedGemm(), Config::parse("bm=32 bn=64 warps_m=1 warps_n=2 stages=2"),
            {40, 72, 48, false, false, 3});
}

TEST(Sm80Functional, FusedBiasGeluEpilogue) {
  checkBoth(*examples::gemmBiasGelu(), Config::parse("bm=64 bn=64 warps_m=2 warps_n=2"), {66, 80, 48, false, true});
}

}  // namespace
}  // namespace kiln
