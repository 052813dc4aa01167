// sm80_multistage on every operand layout, strided operands and unaligned rows, run by the kern IR
// simulator against the tile-IR interpreter (testing/sim_run.h): all four layouts of A and B,
// leading dimensions larger than the rows, batch strides (0 included), K and N that are not
// multiples of 8 through narrower cp.async and through registers, element-by-element stores, with
// both cp.async timings. The simulator refuses a misaligned cp.async, load or store, so a kernel
// that assumed more alignment than its rows have fails here.
#include <gtest/gtest.h>

#include "kiln/program_builder.h"
#include "tests/unit/testing/sim_run.h"

namespace kiln {
namespace {

struct Layout {
  bool aCol = false, bKMajor = false;  // A stored [K][M] (column-major), B stored [N][K]
  bool aStrided = false, bStrided = false, cStrided = false;
  ScalarType in = bf16, out = bf16;
  bool batched = false;
  bool bShared = false;  // batched: one B for every batch (batch stride 0)
};

// C[b] = A[b] B[b] with the layouts asked; strides are the dims lda, ldb, ldc (and sa, sb, sc for
// the batch strides).
std::unique_ptr<ir::Module> gemm(const Layout& l) {
  ProgramBuilder p("gemm_layouts");
  auto [M, N, K, lda, ldb] = p.dims("M", "N", "K", "lda", "ldb");
  auto [ldc, Bt, sa, sc] = p.dims("ldc", "Bt", "sa", "sc");
  std::vector<Ext> sA = {M, K}, sB = {K, N}, sC = {M, N};
  if (l.batched) sA.insert(sA.begin(), Bt), sB.insert(sB.begin(), Bt), sC.insert(sC.begin(), Bt);
  auto strided = [&](std::vector<Ext> inner, Ext batch) {
    if (l.batched) inner.insert(inner.begin(), batch);
    return Strides(inner);
  };
  Tensor A = l.aStrided ? p.input("A", l.in, sA, strided(l.aCol ? std::vector<Ext>{1, lda} : std::vector<Ext>{lda, 1}, sa))
             : l.aCol   ? p.input("A", l.in, sA, l.batched ? std::vector<int64_t>{1, 2, 0} : std::vector<int64_t>{0, 1})
                        : p.input("A", l.in, sA);
  Ext bBatch = l.bShared ? Ext(0) : Ext(Bt);  // a dense batch stride is never asked for: see below
  Tensor B = l.bStrided ? p.input("B", l.in, sB,
                                  strided(l.bKMajor ? std::vector<Ext>{1, ldb} : std::vector<Ext>{ldb, 1}, bBatch))
             : l.bKMajor ? p.input("B", l.in, sB, l.batched ? std::vector<int64_t>{1, 2, 0} : std::vector<int64_t>{0, 1})
                         : p.input("B", l.in, sB);
  Tensor C = l.cStrided ? p.output("C", l.out, sC, strided({ldc, 1}, sc)) : p.output("C", l.out, sC);
  auto body = [&](auto... idx) {
    auto run = [&](auto b, Coord m, Coord n) {
      Tile acc = p.zeros(f32, {m, n});
      p.reduce(K, [&](Coord k) {
        if constexpr (std::is_same_v<decltype(b), Index>) acc = dot(A(b, m, k), B(b, k, n), acc);
        else acc = dot(A(m, k), B(k, n), acc);
      });
      if constexpr (std::is_same_v<decltype(b), Index>) C(b, m, n) = cast(l.out, acc);
      else C(m, n) = cast(l.out, acc);
    };
    run(idx...);
  };
  if (l.batched)
    p.tile_batched(Bt, {M, N}, [&](Index b, Coord m, Coord n) { body(b, m, n); });
  else
    p.tile({M, N}, [&](Coord m, Coord n) { body(0, m, n); });
  return p.finish();
}

std::map<std::string, int64_t> dimsFor(int64_t m, int64_t n, int64_t k, int64_t pad = 0, int64_t batch = 1) {
  // Leading dimensions `pad` past the longest row any layout needs (A's M or K, B's K or N).
  int64_t lda = std::max(m, k) + pad, ldb = std::max(k, n) + pad, ldc = n + pad;
  return {{"M", m}, {"N", n}, {"K", k}, {"lda", lda}, {"ldb", ldb}, {"ldc", ldc}, {"Bt", batch},
          {"sa", lda * std::max(m, k) + 8}, {"sc", ldc * m + 8}};
}

void expectRuns(const Layout& l, const std::string& config, const std::map<std::string, int64_t>& dims,
                const Target& t = Target::sm80()) {
  auto program = gemm(l);
  for (auto timing : {testing::CopyTiming::Early, testing::CopyTiming::Late}) {
    testing::SimRun r = testing::simulateAgainstInterpreter(*program, Config::parse(config), t, dims, 7, timing);
    EXPECT_EQ(r.error, "") << r.config << (timing == testing::CopyTiming::Late ? " (late copies)" : "");
  }
}

const char* kConfig = "strategy=sm80_multistage bm=64 bn=64 bk=32 stages=3 warps_m=2 warps_n=2";

TEST(Sm80Layouts, AllFourDenseLayouts) {
  for (bool aCol : {false, true})
    for (bool bK : {false, true}) {
      SCOPED_TRACE(std::string(aCol ? "T" : "N") + (bK ? "T" : "N"));
      Layout l;
      l.aCol = aCol;
      l.bKMajor = bK;
      // Dense rows are 16-byte aligned here (M, N, K multiples of 8); the edges are ragged.
      expectRuns(l, kConfig, dimsFor(72, 88, 104));
      expectRuns(l, "strategy=sm80_multistage bm=64 bn=64 bk=32 stages=2 warps_m=2 warps_n=2 frag_prefetch=none",
                 dimsFor(136, 40, 48));
    }
}

TEST(Sm80Layouts, ColumnMajorAOnLargerTiles) {
  Layout l;
  l.aCol = true;
  expectRuns(l, "strategy=sm80_multistage bm=128 bn=64 bk=64 stages=3 warps_m=2 warps_n=2", dimsFor(136, 72, 200));
  l.in = l.out = f16;
  expectRuns(l, "strategy=sm80_multistage bm=32 bn=64 bk=32 stages=2 warps_m=1 warps_n=2", dimsFor(40, 72, 56));
}

TEST(Sm80Layouts, StridedOperandsWithRaggedRows) {
  // Leading dimensions past the rows, rows of any length: the 16-byte copies take what is inside.
  for (bool aCol : {false, true})
    for (bool bK : {false, true}) {
      SCOPED_TRACE(std::string(aCol ? "T" : "N") + (bK ? "T" : "N"));
      Layout l{aCol, bK, true, true, true};
      std::map<std::string, int64_t> d = dimsFor(37, 30, 45);  // pairs of C need an even N
      for (const char* ld : {"lda", "ldb", "ldc"}) d[ld] = (d[ld] + 7) / 8 * 8 + 8;  // aligned, longer than a row
      expectRuns(l, kConfig, d);
    }
}

TEST(Sm80Layouts, OddRowsThroughRegistersAndSingleStores) {
  // K and N odd: no cp.async can address the rows; element loads, element stores.
  for (bool aCol : {false, true})
    for (bool bK : {false, true}) {
      SCOPED_TRACE(std::string(aCol ? "T" : "N") + (bK ? "T" : "N"));
      Layout l{aCol, bK};
      expectRuns(l, std::string(kConfig) + " align_a=2 align_b=2 align_c=2", dimsFor(37, 29, 45));
    }
  Layout f32out;
  f32out.out = f32;
  expectRuns(f32out, std::string(kConfig) + " align_a=2 align_b=2 align_c=4", dimsFor(19, 33, 27));
}

TEST(Sm80Layouts, FourAndEightByteCopies) {
  Layout l;
  expectRuns(l, std::string(kConfig) + " align_a=4 align_b=4 align_c=4", dimsFor(40, 30, 46));
  expectRuns(l, std::string(kConfig) + " align_a=8 align_b=8", dimsFor(40, 36, 44));
  Layout s{true, false, true, true, true};
  std::map<std::string, int64_t> d = dimsFor(33, 27, 43);
  d["lda"] = 46, d["ldb"] = 30, d["ldc"] = 31;  // 4-byte aligned leading dimensions, odd rows inside
  expectRuns(s, std::string(kConfig) + " align_a=4 align_b=4 align_c=2", d);
}

TEST(Sm80Layouts, BatchStridesIncludingOneSharedB) {
  Layout l;
  l.batched = true;
  l.aStrided = l.cStrided = true;
  l.bStrided = l.bShared = true;
  std::map<std::string, int64_t> d = dimsFor(24, 40, 56, 8, 3);
  expectRuns(l, kConfig, d);
  l.aCol = true;
  l.bKMajor = true;
  expectRuns(l, kConfig, d);
}

TEST(Sm80Layouts, Fp8ThroughRegisters) {
  Layout l;
  l.bKMajor = true;
  l.in = f8e4m3;
  expectRuns(l, "strategy=sm80_multistage bm=64 bn=64 bk=64 stages=3 warps_m=2 warps_n=2 align_a=1 align_b=1 align_c=2",
             dimsFor(33, 21, 77), Target::sm89());
}

}  // namespace
}  // namespace kiln
