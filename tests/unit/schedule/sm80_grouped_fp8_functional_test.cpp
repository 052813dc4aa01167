// The sm80_multistage lowering of grouped (MoE) and FP8 GEMMs, run on the CPU by the kern IR
// simulator (tests/unit/testing), every output element checked against a double reference:
//  * grouped: several groups, ragged group sizes that are multiples of the program's align (one
//    group empty, the last one cut short by M), both B layouts, a group id outside [0, G) (its rows
//    must come out as zeros, with no access outside B);
//  * FP8: e4m3 x e4m3 (and e4m3 x e5m2) with per-row and per-column f32 scales, on values whose
//    products, sums and scalings are exact in f32, so the BF16 output must equal the rounded
//    reference bit for bit; ragged M, N and K.
// Both cp.async timings (Early / Late, see kern_sim.h); outputs start poisoned and a guard after C
// must stay untouched.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "examples/examples.h"
#include "kiln/compile.h"
#include "kiln/float_formats.h"
#include "kiln/ir/parser.h"
#include "kiln/program_builder.h"
#include "kiln/target.h"
#include "ops/gemm_fp8.h"
#include "schedule/config.h"
#include "tests/unit/testing/kern_sim.h"
#include "tests/unit/testing/seeded_inputs.h"

namespace kiln {
namespace {

constexpr uint16_t kPoison = 0xFFC1;
constexpr int64_t kGuard = 64;

template <typename T>
std::vector<uint8_t> bytesOf(const std::vector<T>& v) {
  std::vector<uint8_t> b(v.size() * sizeof(T));
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

// Compiles `program`, binds its tensors by name from `inputs` (the output "C" is allocated,
// poisoned, with a guard), runs every block in the simulator and returns C (bf16 bits, guard
// included).
std::vector<uint16_t> simulate(const ir::Module& program, const Target& target, const Config& config,
                               const std::map<std::string, int64_t>& dims,
                               const std::map<std::string, std::vector<uint8_t>>& inputs, int64_t cElems,
                               testing::CopyTiming timing) {
  ir::DiagnosticEngine diag;
  auto r = compile(program, target, config, diag);
  EXPECT_TRUE(r) << diag.str();
  if (!r) return {};
  auto kern = ir::parseModule(r->kernIr, diag);
  EXPECT_TRUE(kern) << diag.str();
  if (!kern) return {};
  EXPECT_TRUE(r->launch.validate(dims, diag)) << diag.str();

  testing::GlobalMemory mem;
  std::map<std::string, uint64_t> addr;
  for (const auto& [name, bytes] : inputs) addr[name] = mem.add(bytes);
  uint64_t dc = mem.add(bytesOf(std::vector<uint16_t>(size_t(cElems + kGuard), kPoison)));
  testing::SimLaunch launch;
  launch.kernel = kern->body().front();
  launch.timing = timing;
  for (const auto& prm : r->launch.params) {
    if (prm.kind == KernelParam::Kind::Pointer)
      launch.args.push_back(prm.name == "C" ? dc : addr.at(prm.name));
    else
      launch.args.push_back(uint32_t(int32_t(dims.at(prm.name))));
  }
  auto grid = r->launch.gridFor(dims);
  for (int i = 0; i < 3; ++i) launch.grid[i] = uint32_t(grid[size_t(i)]);
  EXPECT_EQ(testing::simulate(launch, mem), "");
  std::vector<uint16_t> c(size_t(cElems + kGuard));
  std::memcpy(c.data(), mem.at(dc).data(), c.size() * 2);
  for (size_t i = size_t(cElems); i < c.size(); ++i)
    if (c[i] != kPoison) {
      ADD_FAILURE() << "wrote past the end of C at element " << i;
      break;
    }
  return c;
}

// ---- grouped ----

struct GroupedProblem {
  std::vector<int64_t> groupRows;  // rows of each group, in order (multiples of 64, the last may be short)
  int64_t groups, n, k;            // G (may exceed the groups that appear), N, K
  bool kMajor = false;
  int64_t badGroupRows = 0;  // trailing rows whose id is G (outside [0, G))
};

// The example's program, or the same with B stored K-major ([G, N, K] in memory).
std::unique_ptr<ir::Module> groupedProgram(bool kMajor) {
  if (!kMajor) return examples::groupedGemm();
  ProgramBuilder p("grouped_gemm_kmajor");
  auto [G, M, N, K] = p.dims("G", "M", "N", "K");
  auto A = p.input("A", bf16, {M, K});
  auto B = p.input("B", bf16, {G, K, N}, /*order=*/{1, 2, 0});
  auto ids = p.input("group_ids", i32, {M});
  auto C = p.output("C", bf16, {M, N});
  p.tile({M, N}, [&](Coord m, Coord n) {
    Index g = p.group_index(ids, m, /*align=*/64);
    Tile acc = p.zeros(f32, {m, n});
    p.reduce(K, [&](Coord k) { acc = dot(A(m, k), B(g, k, n), acc); });
    C(m, n) = cast(bf16, acc);
  });
  return p.finish();
}

void checkGrouped(const Config& config, const GroupedProblem& p) {
  int64_t m = p.badGroupRows;
  for (int64_t r : p.groupRows) m += r;
  std::vector<int32_t> ids;
  for (size_t gi = 0; gi < p.groupRows.size(); ++gi) ids.insert(ids.end(), size_t(p.groupRows[gi]), int32_t(gi));
  ids.insert(ids.end(), size_t(p.badGroupRows), int32_t(p.groups));
  testing::SeededInputs inputs(uint32_t(m * 31 + p.n));
  auto a = inputs.bf16(size_t(m * p.k)), b = inputs.bf16(size_t(p.groups * p.k * p.n));
  std::map<std::string, int64_t> dims = {{"G", p.groups}, {"M", m}, {"N", p.n}, {"K", p.k}};
  auto program = groupedProgram(p.kMajor);
  for (auto timing : {testing::CopyTiming::Early, testing::CopyTiming::Late}) {
    auto c = simulate(*program, Target::sm80(), config, dims,
                      {{"A", bytesOf(a)}, {"B", bytesOf(b)}, {"group_ids", bytesOf(ids)}}, m * p.n, timing);
    ASSERT_FALSE(c.empty());
    int bad = 0;
    for (int64_t i = 0; i < m && bad < 5; ++i)
      for (int64_t j = 0; j < p.n && bad < 5; ++j) {
        int64_t g = ids[size_t(i)];
        double ref = 0;
        if (g < p.groups)
          for (int64_t kk = 0; kk < p.k; ++kk) {
            const uint16_t* bg = b.data() + g * p.k * p.n;
            ref += double(bf16BitsToFloat(a[size_t(i * p.k + kk)])) *
                   double(bf16BitsToFloat(bg[size_t(p.kMajor ? j * p.k + kk : kk * p.n + j)]));
          }
        double got = bf16BitsToFloat(c[size_t(i * p.n + j)]);
        double tol = std::fabs(ref) / 128 + 1e-3 * std::sqrt(double(p.k));
        if (!(std::fabs(got - ref) <= tol)) {
          ++bad;
          ADD_FAILURE() << "[" << config.str() << "] C[" << i << "][" << j << "] (group " << g << ") = " << got
                        << ", expected " << ref;
        }
      }
  }
}

TEST(Sm80Functional, GroupedGemmRaggedGroups) {
  // Groups of 128, 0, 192 and 44 rows (the last cut short by M = 364): blocks of 64 and of 32 rows.
  GroupedProblem p{{128, 0, 192, 44}, 4, 72, 104};
  checkGrouped(Config::parse("bm=64 bn=64 warps_m=2 warps_n=2"), p);
  checkGrouped(Config::parse("bm=32 bn=64 warps_m=1 warps_n=2 stages=2"), p);
}

TEST(Sm80Functional, GroupedGemmKMajorBAndGroupedRaster) {
  GroupedProblem p{{64, 192, 64}, 3, 40, 48, /*kMajor=*/true};
  checkGrouped(Config::parse("bm=64 bn=64 warps_m=2 warps_n=2 raster=grouped group_m=2"), p);
  p.kMajor = false;
  checkGrouped(Config::parse("bm=64 bn=64 warps_m=2 warps_n=2 raster=grouped group_m=2"), p);
}

TEST(Sm80Functional, GroupedGemmGroupIdOutsideBReadsNothing) {
  // The last 64 rows carry id G: the kernel must not address B[G] (the simulator faults on any
  // access outside a buffer) and must write zeros there.
  checkGrouped(Config::parse("bm=64 bn=64 warps_m=2 warps_n=2"), GroupedProblem{{64, 64}, 2, 64, 64, false, 64});
}

// ---- FP8 ----

struct Fp8Problem {
  int64_t m, n, k;
  Fp8Format bFormat = Fp8Format::E4M3;
};

void checkFp8(const Target& target, const Config& config, const Fp8Problem& p) {
  // Operands from a set every FP8 format holds exactly; scales are signed powers of two. Every
  // product is a multiple of 1/4 below 64 in magnitude and |sum| < 64 K, so f32 holds every partial
  // sum and both scalings exactly: the only rounding is the final one to bf16.
  static const float kValues[] = {0.f, 0.5f, -0.5f, 1.f, -1.f, 1.5f, -1.5f, 2.f, -2.f, 3.f, -3.f, 4.f, -6.f, 8.f};
  std::mt19937 rng(uint32_t(p.m * 17 + p.n * 3 + p.k));
  std::uniform_int_distribution<int> pick(0, int(std::size(kValues)) - 1), exp2(-3, 3), sign(0, 1);
  auto fp8 = [&](size_t n, Fp8Format f) {
    std::vector<uint8_t> v(n);
    for (auto& x : v) x = floatToFp8Bits(kValues[pick(rng)], f);
    return v;
  };
  auto scales = [&](size_t n) {
    std::vector<float> v(n);
    for (auto& x : v) x = std::ldexp(sign(rng) ? -1.f : 1.f, exp2(rng));
    return v;
  };
  auto a = fp8(size_t(p.m * p.k), Fp8Format::E4M3), b = fp8(size_t(p.n * p.k), p.bFormat);  // B stored [N][K]
  auto sa = scales(size_t(p.m)), sb = scales(size_t(p.n));
  std::map<std::string, int64_t> dims = {{"M", p.m}, {"N", p.n}, {"K", p.k}};
  // fp8_rowwise_gemm, or with B in e5m2 instead of e4m3.
  auto program = p.bFormat == Fp8Format::E4M3 ? examples::fp8RowwiseGemm()
                                              : ops::fp8ScaledGemmProgram("fp8_mixed_gemm", ir::ScalarType::F8E5M2);
  for (auto timing : {testing::CopyTiming::Early, testing::CopyTiming::Late}) {
    auto c = simulate(*program, target, config, dims,
                      {{"A", a}, {"B", b}, {"scale_a", bytesOf(sa)}, {"scale_b", bytesOf(sb)}}, p.m * p.n, timing);
    ASSERT_FALSE(c.empty());
    int bad = 0;
    for (int64_t i = 0; i < p.m && bad < 5; ++i)
      for (int64_t j = 0; j < p.n && bad < 5; ++j) {
        double acc = 0;
        for (int64_t kk = 0; kk < p.k; ++kk)
          acc += double(fp8BitsToFloat(a[size_t(i * p.k + kk)], Fp8Format::E4M3)) *
                 double(fp8BitsToFloat(b[size_t(j * p.k + kk)], p.bFormat));
        double ref = acc * sa[size_t(i)] * sb[size_t(j)];
        uint16_t want = floatToBf16Bits(float(ref));  // exact in f32, so one rounding
        uint16_t got = c[size_t(i * p.n + j)];
        if (got != want) {
          ++bad;
          ADD_FAILURE() << target.name << " [" << config.str() << "] " << p.m << "x" << p.n << "x" << p.k << ": C["
                        << i << "][" << j << "] = " << bf16BitsToFloat(got) << ", expected " << ref;
        }
      }
  }
}

TEST(Sm80Functional, Fp8RowwiseScaledGemmIsExact) {
  for (const char* config : {"bm=64 bn=64 bk=64 warps_m=2 warps_n=2 stages=3",
                             "bm=32 bn=64 bk=64 warps_m=1 warps_n=2 stages=2",
                             "bm=128 bn=128 bk=128 warps_m=2 warps_n=2 stages=2"}) {
    SCOPED_TRACE(config);
    checkFp8(Target::sm89(), Config::parse(config), {70, 72, 80});
  }
  checkFp8(Target::sm90a(), Config::parse("bm=64 bn=128 bk=64 warps_m=2 warps_n=2 stages=4"), {130, 136, 208});
}

TEST(Sm80Functional, Fp8FewerKTilesThanStagesAndMixedFormats) {
  checkFp8(Target::sm120(), Config::parse("bm=64 bn=64 bk=64 warps_m=2 warps_n=2 stages=4"), {17, 24, 16});
  checkFp8(Target::sm89(), Config::parse("bm=64 bn=64 bk=64 warps_m=2 warps_n=2 stages=3"),
           {66, 40, 96, Fp8Format::E5M2});
}

}  // namespace
}  // namespace kiln
