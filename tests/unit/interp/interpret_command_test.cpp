// `kiln interpret`'s engine: report format, determinism, group ids, and its user errors.
#include "interp/interpret_command.h"

#include <gtest/gtest.h>

#include <cmath>
#include <regex>

#include "gemm_programs.h"

namespace kiln::interp::testing {
namespace {

struct OutputStats {
  double sum, sumsq, maxErr, relErr;
};

// The numbers of the report's line for output `name`.
OutputStats statsOf(const std::string& report, const std::string& name) {
  std::regex line("output " + name + R"( \w+ \[[0-9, ]*\]: sum (\S+) sumsq (\S+) max_abs_err (\S+) rel_fro_err (\S+))");
  std::smatch m;
  if (!std::regex_search(report, m, line)) {
    ADD_FAILURE() << "no line for output " << name << " in:\n" << report;
    return {};
  }
  return {std::stod(m[1]), std::stod(m[2]), std::stod(m[3]), std::stod(m[4])};
}

std::string interpret(const std::string& text, const std::string& dims, uint64_t seed, std::string* error = nullptr) {
  ir::DiagnosticEngine diag;
  std::string report = runInterpretCommand(text, dims, seed, diag);
  if (error) *error = diag.diagnostics().empty() ? "" : diag.diagnostics().front().message;
  else EXPECT_FALSE(diag.hadError()) << diag.str();
  return report;
}

TEST(InterpretCommand, ReportsChecksumsAndErrorsAgainstTheReference) {
  std::string report = interpret(kBf16Gemm, "M=64, N=32,K=16", 7);
  EXPECT_EQ(report.substr(0, report.find("output")), "program gemm\ndims M=64 N=32 K=16\nseed 7\n");
  OutputStats s = statsOf(report, "C");
  EXPECT_GT(s.sumsq, 0.0);
  // A bf16 output is one bf16 rounding (relative 2^-8 at most) plus f32 accumulation away from the
  // fp64 reference; with 2048 rounded outputs the error cannot be zero.
  EXPECT_GT(s.relErr, 0.0);
  EXPECT_LT(s.relErr, std::ldexp(1.0, -8));
  EXPECT_GT(s.maxErr, 0.0);
}

TEST(InterpretCommand, IsDeterministicInTheSeed) {
  std::string a = interpret(kGemmBiasGelu, "M=33,N=17,K=40", 1);
  EXPECT_EQ(interpret(kGemmBiasGelu, "M=33,N=17,K=40", 1), a);
  EXPECT_NE(statsOf(interpret(kGemmBiasGelu, "M=33,N=17,K=40", 2), "C").sum, statsOf(a, "C").sum);
}

TEST(InterpretCommand, GeneratesValidGroupIds) {
  // Ragged M: the last aligned chunk is 36 rows.
  OutputStats s = statsOf(interpret(kGroupedGemm, "M=292,N=24,K=40,G=3", 5), "C");
  EXPECT_LT(s.relErr, std::ldexp(1.0, -8));
}

TEST(InterpretCommand, RunsTheOtherGemmPrograms) {
  for (const char* text : {kBatchedGemm, kKMajorGemm, kFp8ScaledGemm}) {
    std::string dims = std::string(text) == kBatchedGemm ? "B=2,M=5,N=70,K=9" : "M=5,N=70,K=9";
    OutputStats s = statsOf(interpret(text, dims, 3), "C");
    EXPECT_LT(s.relErr, std::ldexp(1.0, -8)) << text;
  }
}

TEST(InterpretCommand, UserErrors) {
  std::string err;
  EXPECT_EQ(interpret(kBf16Gemm, "M=64,N", 1, &err), "");
  EXPECT_EQ(err, "bad dims entry 'N': expected NAME=INTEGER, as in \"M=64,N=32,K=16\"");
  interpret(kBf16Gemm, "M=64,N=x2,K=1", 1, &err);
  EXPECT_EQ(err, "bad dims entry 'N=x2': expected NAME=INTEGER, as in \"M=64,N=32,K=16\"");
  interpret(kBf16Gemm, "M=1,M=2", 1, &err);
  EXPECT_EQ(err, "dim 'M' is given twice");
  interpret(kBf16Gemm, "M=64,N=32", 1, &err);
  EXPECT_EQ(err, "no value given for dim 'K'");
  interpret("%0 = arith.constant() {value = 1} : i32\n", "", 1, &err);
  EXPECT_EQ(err, "the input holds no tile.program");
  interpret(std::string(kBf16Gemm) + kKMajorGemm, "M=1,N=1,K=1", 1, &err);
  EXPECT_EQ(err, "the input holds more than one tile.program; interpret runs one");
  interpret("tile.program(", "", 1, &err);
  EXPECT_NE(err, "");
}

}  // namespace
}  // namespace kiln::interp::testing
