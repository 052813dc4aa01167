// gemm_bf16 and the sm80_multistage strategy on a real GPU: random (never zero) inputs, outputs
// poisoned before each run, a guard region after C that must stay untouched, and a reference in
// double precision from the same bf16 inputs. Without a GPU every test skips and says why.
//
// Tolerance: the kernel accumulates exact bf16 products in f32 and rounds once to bf16, so the
// error is the bf16 rounding of the result (2^-9 relative) plus f32 accumulation error (about
// K * 2^-24 of the sum of |products|).
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <optional>
#include <random>
#include <vector>

#include "examples/examples.h"
#include "kiln/compile.h"
#include "kiln/float_formats.h"
#include "kiln/runtime/driver.h"
#include "kiln/runtime/launcher.h"
#include "kiln/runtime/memory.h"
#include "kiln/runtime/module.h"
#include "kiln/runtime/stream.h"
#include "kiln/target.h"
#include "ops/gemm_bf16.h"
#include "schedule/config.h"
#include "tests/gpu/ops/gemm_reference.h"

namespace kiln {
namespace {

using runtime::DeviceBuffer;

constexpr uint16_t kPoison = 0xFFC1;  // a bf16 NaN no kernel computes
constexpr int64_t kGuard = 4096;      // elements after C that must stay poisoned

std::vector<uint16_t> randomBf16(size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  std::vector<uint16_t> v(n);
  for (auto& x : v) {
    float f = d(rng);
    if (std::fabs(f) < 1e-3f) f = 0.5f;  // never zero
    x = floatToBf16Bits(f);
  }
  return v;
}

struct Gemm {
  int64_t m, n, k;
  bool kMajor = false;
  bool bias = false;  // C = gelu_tanh(A B + bias) (the gemm_bias_gelu example)
};

class GemmFamilyGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    drv_ = runtime::Driver::get(&why);
    if (!drv_) GTEST_SKIP() << why;
    ctx_.emplace(runtime::Context::primary(*drv_, 0));
  }

  // Compiles `program` with `config` for `target`, runs it on `g`, checks every element.
  void run(const ir::Module& program, const Config& config, const Target& target, const Gemm& g) {
    ir::DiagnosticEngine diag;
    auto r = compile(program, target, config, diag);
    ASSERT_TRUE(r) << diag.str();
    const LaunchInfo& L = r->launch;
    std::map<std::string, int64_t> dims = {{"M", g.m}, {"N", g.n}, {"K", g.k}};
    ASSERT_TRUE(L.validate(dims, diag)) << diag.str();

    std::mt19937 rng(1234 + g.m * 7 + g.n * 3 + g.k);
    auto a = randomBf16(size_t(g.m * g.k), rng);
    auto b = randomBf16(size_t(g.k * g.n), rng);  // [K][N], or [N][K] when K-major
    std::vector<float> bias(size_t(g.n));
    for (auto& x : bias) x = std::uniform_real_distribution<float>(-1.f, 1.f)(rng);

    auto da = DeviceBuffer::allocate(*ctx_, a.size() * 2);
    auto db = DeviceBuffer::allocate(*ctx_, b.size() * 2);
    auto dbias = DeviceBuffer::allocate(*ctx_, bias.size() * 4);
    size_t cElems = size_t(g.m * g.n + kGuard);
    auto dc = DeviceBuffer::allocate(*ctx_, cElems * 2);
    da.copyFromHost(a.data(), a.size() * 2);
    db.copyFromHost(b.data(), b.size() * 2);
    dbias.copyFromHost(bias.data(), bias.size() * 4);
    dc.fill32(uint32_t(kPoison) << 16 | kPoison);

    auto mod = runtime::Module::load(*ctx_, r->ptx, L.kernelName + ".ptx");
    auto fn = mod.function(L.kernelName, int(L.dynamicSmemBytes));
    std::vector<CUdeviceptr> ptrs;
    std::vector<int32_t> ints;
    ptrs.reserve(8);
    ints.reserve(8);
    std::vector<void*> params;
    for (const auto& p : L.params) {
      if (p.kind == KernelParam::Kind::Pointer) {
        ptrs.push_back(p.name == "A" ? da.ptr() : p.name == "B" ? db.ptr() : p.name == "bias" ? dbias.ptr() : dc.ptr());
        params.push_back(&ptrs.back());
      } else {
        ints.push_back(int32_t(dims.at(p.name)));
        params.push_back(&ints.back());
      }
    }
    auto grid = L.gridFor(dims);
    auto stream = runtime::Stream::create(*ctx_);
    runtime::launch(fn, {uint32_t(grid[0]), uint32_t(grid[1]), uint32_t(grid[2])}, {uint32_t(L.threads), 1, 1},
                    {1, 1, 1}, uint32_t(L.dynamicSmemBytes), stream, params);
    stream.synchronize();
    std::vector<uint16_t> c(cElems);
    dc.copyToHost(c.data(), cElems * 2);

    int bad = 0;
    for (int64_t i = 0; i < g.m && bad < 5; ++i)
      for (int64_t j = 0; j < g.n && bad < 5; ++j) {
        double acc = 0, mag = 0;
        for (int64_t kk = 0; kk < g.k; ++kk) {
          double x = bf16BitsToFloat(a[size_t(i * g.k + kk)]);
          double y = bf16BitsToFloat(b[size_t(g.kMajor ? j * g.k + kk : kk * g.n + j)]);
          acc += x * y;
          mag += std::fabs(x * y);
        }
        double ref = acc, tol = 1.0 / 256 * std::fabs(acc) + mag * g.k * 6e-8 + 1e-6;
        if (g.bias) {
          double x = acc + bias[size_t(j)];
          ref = 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
          tol = 1.0 / 128 * std::fabs(ref) + 2e-3 * (1 + std::fabs(x)) + mag * g.k * 6e-8;
        }
        double got = bf16BitsToFloat(c[size_t(i * g.n + j)]);
        if (!(std::fabs(got - ref) <= tol)) {
          ++bad;
          ADD_FAILURE() << L.kernelName << " " << g.m << "x" << g.n << "x" << g.k << ": C[" << i << "][" << j
                        << "] = " << got << ", expected " << ref << " (tolerance " << tol << ")";
        }
      }
    for (size_t i = size_t(g.m * g.n); i < cElems && bad < 5; ++i)
      if (c[i] != kPoison) {
        ++bad;
        ADD_FAILURE() << L.kernelName << ": wrote past the end of C, at element " << i;
      }
  }

  runtime::Driver* drv_ = nullptr;
  std::optional<runtime::Context> ctx_;
};


TEST_F(GemmFamilyGpu, AlignedSquare) {
  const auto& v = *ops::findGemmBf16Variant("bf16_gemm_128x128x32_s3");
  run(*v.program(false), v.config, Target::sm80(), {256, 256, 256});
}

TEST_F(GemmFamilyGpu, RaggedEdgesEveryShape) {
  // M arbitrary, N and K multiples of 8 but not of any tile.
  for (const char* name : {"bf16_gemm_32x64x32_s2", "bf16_gemm_32x128x32_s4", "bf16_gemm_64x64x32_s3",
                           "bf16_gemm_64x128x32_s2", "bf16_gemm_128x64x32_s4", "bf16_gemm_128x128x32_s3",
                           "bf16_gemm_64x64x64_s4", "bf16_gemm_128x128x64_s4"}) {
    const auto& v = *ops::findGemmBf16Variant(name);
    run(*v.program(false), v.config, Target::sm80(), {301, 264, 200});
  }
}

TEST_F(GemmFamilyGpu, KMajorB) {
  for (const char* name : {"bf16_gemm_32x64x32_s2", "bf16_gemm_128x128x32_s3", "bf16_gemm_64x128x64_s3"}) {
    const auto& v = *ops::findGemmBf16Variant(name);
    run(*v.program(true), v.config, Target::sm80(), {129, 70, 136, true});
  }
}

TEST_F(GemmFamilyGpu, LongKAndTinyK) {
  const auto& v = *ops::findGemmBf16Variant("bf16_gemm_128x128x64_s3");
  run(*v.program(false), v.config, Target::sm80(), {128, 128, 4096});
  run(*v.program(false), v.config, Target::sm80(), {70, 40, 8});  // one partial K tile, fewer than stages
}

TEST_F(GemmFamilyGpu, Sm90aPtxAndGroupedRaster) {
  const auto& v = *ops::findGemmBf16Variant("bf16_gemm_64x64x32_s3");
  Config grouped = v.config;
  grouped.raster = Raster::Grouped;
  grouped.groupM = 3;
  run(*v.program(false), grouped, Target::sm80(), {500, 328, 64});
  // The sm_90a half runs on a compute capability 9.0 GPU only; elsewhere the test says it skipped it.
  std::string why;
  if (!testing::needHopper(&why)) GTEST_SKIP() << "ran the sm_80 half only; the sm_90a half needs a Hopper GPU: " << why;
  run(*v.program(false), v.config, Target::sm90a(), {200, 136, 96});
}

TEST_F(GemmFamilyGpu, FusedBiasGeluEpilogue) {
  auto program = examples::gemmBiasGelu();
  run(*program, Config::parse("bm=128 bn=128 bk=32 stages=3 warps_m=2 warps_n=4"), Target::sm80(),
      {150, 200, 64, false, true});
}

}  // namespace
}  // namespace kiln
