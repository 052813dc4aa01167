// Every user error of run(): the exact diagnostic, and that nothing crashes.
#include <gtest/gtest.h>

#include "gemm_programs.h"
#include "interp_test_util.h"

namespace kiln::interp::testing {
namespace {

using ir::ScalarType;

// A valid GEMM request that each test breaks in one way.
struct GemmCall {
  std::unique_ptr<ir::Module> mod = parseProgram(kBf16Gemm);
  HostTensor A = makeHostTensor(ScalarType::BF16, {64, 16});
  HostTensor B = makeHostTensor(ScalarType::BF16, {16, 32});
  HostTensor C = makeHostTensor(ScalarType::BF16, {64, 32});
  RunRequest req{{{"M", 64}, {"N", 32}, {"K", 16}}, {{"A", &A}, {"B", &B}, {"C", &C}}, {}};

  // The messages of all reported errors, in order; "" when run() succeeded.
  std::string errors(const RunOptions& opts = {}) {
    ir::DiagnosticEngine diag;
    bool ok = run(programOf(*mod), req, diag, opts);
    std::string s;
    for (const auto& d : diag.diagnostics()) s += (s.empty() ? "" : "\n") + d.message;
    EXPECT_EQ(ok, s.empty()) << s;
    return s;
  }
};

TEST(InterpErrors, TheValidRequestRuns) { EXPECT_EQ(GemmCall().errors(), ""); }

TEST(InterpErrors, MissingDim) {
  GemmCall c;
  c.req.dims.erase("K");
  EXPECT_EQ(c.errors(), "no value given for dim 'K'");
}

TEST(InterpErrors, NonPositiveDim) {
  GemmCall c;
  c.req.dims["M"] = 0;
  c.req.dims["N"] = -3;
  EXPECT_EQ(c.errors(), "dim 'M' must be positive, got 0\ndim 'N' must be positive, got -3");
}

TEST(InterpErrors, UnknownDim) {
  GemmCall c;
  c.req.dims["Q"] = 4;
  EXPECT_EQ(c.errors(), "'Q' is not a dim of program 'gemm'");
}

TEST(InterpErrors, MissingTensors) {
  GemmCall c;
  c.req.tensors.erase("B");
  c.req.tensors.erase("C");
  EXPECT_EQ(c.errors(), "no tensor given for input 'B'\nno tensor given for output 'C'");
}

TEST(InterpErrors, ExtraTensor) {
  GemmCall c;
  HostTensor D = makeHostTensor(ScalarType::BF16, {1});
  c.req.tensors["D"] = &D;
  EXPECT_EQ(c.errors(), "'D' is not a tensor argument of program 'gemm'");
}

TEST(InterpErrors, NullTensor) {
  GemmCall c;
  c.req.tensors["A"] = nullptr;
  EXPECT_EQ(c.errors(), "the tensor given for 'A' is null");
}

TEST(InterpErrors, WrongDtype) {
  GemmCall c;
  c.A = makeHostTensor(ScalarType::F32, {64, 16});
  EXPECT_EQ(c.errors(), "tensor 'A' is declared bf16, but the tensor given is f32");
}

TEST(InterpErrors, WrongShape) {
  GemmCall c;
  c.B = makeHostTensor(ScalarType::BF16, {32, 16});
  EXPECT_EQ(c.errors(), "tensor 'B' is declared [K, N] = [16, 32], but the tensor given has shape [32, 16]");
}

TEST(InterpErrors, WrongByteCount) {
  GemmCall c;
  c.A.bytes.resize(10);
  EXPECT_EQ(c.errors(), "tensor 'A' has 10 bytes, but its 1024 bf16 elements need 2048");
}

TEST(InterpErrors, ErrorsPointAtTheArgument) {
  GemmCall c;
  c.A = makeHostTensor(ScalarType::F32, {64, 16});
  ir::DiagnosticEngine diag;
  EXPECT_FALSE(run(programOf(*c.mod), c.req, diag));
  ASSERT_EQ(diag.diagnostics().size(), 1u);
  EXPECT_EQ(diag.diagnostics()[0].loc.line, 2u);  // the line of `%A = tile.input()`
}

TEST(InterpErrors, BadBlockSizeOverrides) {
  GemmCall c;
  EXPECT_EQ(c.errors(RunOptions{{{"M", 0}}}), "block size for dim 'M' must be positive, got 0");
  EXPECT_EQ(c.errors(RunOptions{{{"Z", 4}}}), "'Z' is not a dim of program 'gemm'");
}

TEST(InterpErrors, NotAProgram) {
  ir::DiagnosticEngine diag;
  auto m = ir::parseModule("%0 = arith.constant() {value = 1} : i32\n", diag);
  ASSERT_TRUE(m);
  RunRequest req;
  EXPECT_FALSE(run(*m->body().front(), req, diag));
  EXPECT_EQ(diag.diagnostics().back().message, "the interpreter runs a 'tile.program', not 'arith.constant'");
}

// ---- scalars ----

const char* kAxpy = R"(tile.program() {sym_name = "axpy", dims = ["N"]} {
  %x = tile.input() {name = "x"} : tensor<f32, [N]>
  %y = tile.output() {name = "y"} : tensor<f32, [N]>
  %alpha = tile.scalar() {name = "alpha"} : f32
  tile.for_tiles() {dims = ["N"]} {
  ^bb0(%n: coord<[N]>):
    %0 = tile.load(%x, %n) : tile<f32, [N]>
    %1 = tile.mul(%0, %alpha) : tile<f32, [N]>
    tile.store(%y, %n, %1)
    tile.yield()
  }
}
)";

std::string axpyErrors(std::map<std::string, double> scalars) {
  auto mod = parseProgram(kAxpy);
  HostTensor x = makeHostTensor(ScalarType::F32, {4}), y = makeHostTensor(ScalarType::F32, {4});
  RunRequest req{{{"N", 4}}, {{"x", &x}, {"y", &y}}, std::move(scalars)};
  ir::DiagnosticEngine diag;
  run(programOf(*mod), req, diag);
  return diag.diagnostics().empty() ? "" : diag.diagnostics()[0].message;
}

TEST(InterpErrors, MissingScalar) { EXPECT_EQ(axpyErrors({}), "no value given for scalar 'alpha'"); }

TEST(InterpErrors, ExtraScalar) {
  EXPECT_EQ(axpyErrors({{"alpha", 1.0}, {"beta", 2.0}}), "'beta' is not a scalar argument of program 'axpy'");
}

// ---- group ids ----

std::string groupedErrors(const std::vector<double>& ids, int64_t G = 4, const RunOptions& opts = {}) {
  auto mod = parseProgram(kGroupedGemm);
  int64_t M = static_cast<int64_t>(ids.size()), N = 8, K = 8;
  HostTensor A = makeHostTensor(ScalarType::BF16, {M, K}), B = makeHostTensor(ScalarType::BF16, {G, K, N});
  HostTensor I = makeHostTensor(ScalarType::I32, {M}, ids), C = makeHostTensor(ScalarType::BF16, {M, N});
  RunRequest req{{{"M", M}, {"N", N}, {"K", K}, {"G", G}}, {{"A", &A}, {"B", &B}, {"ids", &I}, {"C", &C}}, {}};
  ir::DiagnosticEngine diag;
  bool ok = run(programOf(*mod), req, diag, opts);
  EXPECT_EQ(ok, diag.diagnostics().empty());
  return diag.diagnostics().empty() ? "" : diag.diagnostics()[0].message;
}

std::vector<double> runs(std::initializer_list<std::pair<int, int>> rs) {
  std::vector<double> v;
  for (auto [g, n] : rs) v.insert(v.end(), n, g);
  return v;
}

TEST(InterpErrors, ValidGroupIdsRun) { EXPECT_EQ(groupedErrors(runs({{0, 64}, {3, 128}, {1, 5}})), ""); }

TEST(InterpErrors, GroupChangesInsideAnAlignedChunk) {
  EXPECT_EQ(groupedErrors(runs({{0, 64}, {1, 36}, {2, 28}})),
            "group ids in 'ids' must be constant on each chunk of 64 rows (tile.group_index {align = 64}), but row 64 "
            "has group 1 and row 100 has group 2");
}

TEST(InterpErrors, GroupRowsNotContiguous) {
  EXPECT_EQ(groupedErrors(runs({{0, 64}, {1, 64}, {0, 64}})),
            "the rows of group 0 in 'ids' must be contiguous, but it appears again at row 128 after group 1");
}

TEST(InterpErrors, GroupIdOutOfRange) {
  EXPECT_EQ(groupedErrors(runs({{0, 64}, {4, 64}})),
            "group id 4 at row 64 of 'ids' is outside [0, 4): 'B' has 4 groups along axis 0");
  EXPECT_EQ(groupedErrors(runs({{-1, 3}})), "group id -1 at row 0 of 'ids' is outside [0, 4): 'B' has 4 groups along axis 0");
}

TEST(InterpErrors, GroupBlockMustDivideTheAlign) {
  EXPECT_EQ(groupedErrors(runs({{0, 64}}), 4, RunOptions{{{"M", 48}}}),
            "block size 48 for dim 'M' must divide the tile.group_index align 64");
}

// ---- errors found while running ----

TEST(InterpErrors, DivisionByZero) {
  auto mod = parseProgram(R"(tile.program() {sym_name = "div", dims = ["N"]} {
  %z = tile.scalar() {name = "z"} : i32
  tile.for_tiles() {dims = ["N"]} {
  ^bb0(%n: coord<[N]>):
    %one = arith.constant() {value = 1} : i32
    %q = arith.divsi(%one, %z) : i32
    tile.yield()
  }
}
)");
  ASSERT_TRUE(mod);
  // No output: the division alone must be reported (an output never stored is a verifier error).
  RunRequest req{{{"N", 2}}, {}, {{"z", 0.0}}};
  ir::DiagnosticEngine diag;
  EXPECT_FALSE(run(programOf(*mod), req, diag));
  EXPECT_EQ(diag.diagnostics().at(0).message, "'arith.divsi' divides by zero");
}

TEST(InterpErrors, UnsignedDivisionByZero) {
  auto mod = parseProgram(R"(tile.program() {sym_name = "div", dims = ["N"]} {
  %z = tile.scalar() {name = "z"} : i32
  tile.for_tiles() {dims = ["N"]} {
  ^bb0(%n: coord<[N]>):
    %one = arith.constant() {value = 1} : i32
    %q = arith.remui(%one, %z) : i32
    tile.yield()
  }
}
)");
  ASSERT_TRUE(mod);
  // No output: the division alone must be reported (an output never stored is a verifier error).
  RunRequest req{{{"N", 2}}, {}, {{"z", 0.0}}};
  ir::DiagnosticEngine diag;
  EXPECT_FALSE(run(programOf(*mod), req, diag));
  EXPECT_EQ(diag.diagnostics().at(0).message, "'arith.remui' divides by zero");
}

TEST(InterpErrors, LoadScalarOutsideTheTensor) {
  auto mod = parseProgram(R"(tile.program() {sym_name = "ls", dims = ["N"]} {
  %x = tile.input() {name = "x"} : tensor<f32, [N]>
  tile.for_tiles() {dims = ["N"]} {
  ^bb0(%n: coord<[N]>):
    %i = arith.constant() {value = 9} : index
    %v = tile.load_scalar(%x, %i) : f32
    tile.yield()
  }
}
)");
  ASSERT_TRUE(mod);
  HostTensor x = makeHostTensor(ScalarType::F32, {4});
  RunRequest req{{{"N", 4}}, {{"x", &x}}, {}};
  ir::DiagnosticEngine diag;
  EXPECT_FALSE(run(programOf(*mod), req, diag));
  EXPECT_EQ(diag.diagnostics().at(0).message, "'tile.load_scalar' reads outside tensor 'x': index 9 on axis 0 of extent 4");
}

}  // namespace
}  // namespace kiln::interp::testing
