#include <gtest/gtest.h>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include "ops/gemm_bf16.h"
namespace kiln::ops {
TEST(ZzPickDump, Dump) {
  const char* env = std::getenv("PICK_SHAPES");
  if (!env) GTEST_SKIP();
  std::stringstream ss(env);
  std::string s;
  while (std::getline(ss, s, ';')) {
    long m, n, k;
    std::sscanf(s.c_str(), "%ldx%ldx%ld", &m, &n, &k);
    GemmProblem p; p.m = m; p.n = n; p.k = k;
    ir::DiagnosticEngine diag;
    auto pick = selectGemmBf16(p, Target::sm90a(), diag);
    std::printf("PICK %s %s\n", s.c_str(), pick ? pick->variant->name.c_str() : "none");
  }
}
}
