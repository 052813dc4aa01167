// Times a 256 x 256 x 256 BF16 GEMM through the tile-IR interpreter (one CPU core) and prints the
// figures. A benchmark, not a test: it never fails on time.
//   kiln_interp_bench [--size N] [--reps R]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kiln/interp/interpreter.h"
#include "kiln/dialects.h"
#include "kiln/ir/parser.h"

namespace {

const char* kGemm = R"(tile.program() {sym_name = "gemm", dims = ["M", "N", "K"]} {
  %A = tile.input() {name = "A"} : tensor<bf16, [M, K]>
  %B = tile.input() {name = "B"} : tensor<bf16, [K, N]>
  %C = tile.output() {name = "C"} : tensor<bf16, [M, N]>
  tile.for_tiles() {dims = ["M", "N"]} {
  ^bb0(%m: coord<[M]>, %n: coord<[N]>):
    %0 = tile.constant() {value = 0.0} : tile<f32, [M, N]>
    %acc = tile.reduce(%0) {dim = "K"} : tile<f32, [M, N]> {
    ^bb0(%k: coord<[K]>, %a: tile<f32, [M, N]>):
      %1 = tile.load(%A, %m, %k) : tile<bf16, [M, K]>
      %2 = tile.load(%B, %k, %n) : tile<bf16, [K, N]>
      %3 = tile.dot(%1, %2, %a) : tile<f32, [M, N]>
      tile.yield(%3)
    }
    %4 = tile.cast(%acc) : tile<bf16, [M, N]>
    tile.store(%C, %m, %n, %4)
    tile.yield()
  }
}
)";

}  // namespace

int main(int argc, char** argv) {
  using namespace kiln;
  int64_t n = 256;
  int reps = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--size")) n = std::atoll(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--reps")) reps = std::atoi(argv[i + 1]);
  }
  ir::DiagnosticEngine diag;
  registerAllDialects();
  auto module = ir::parseModule(kGemm, diag);
  if (!module) {
    std::fprintf(stderr, "%s\n", diag.str().c_str());
    return 1;
  }
  std::mt19937_64 rng(0);
  std::normal_distribution<double> normal;
  std::vector<double> va(n * n), vb(n * n);
  for (double& x : va) x = normal(rng);
  for (double& x : vb) x = normal(rng);
  interp::HostTensor A = interp::makeHostTensor(ir::ScalarType::BF16, {n, n}, va);
  interp::HostTensor B = interp::makeHostTensor(ir::ScalarType::BF16, {n, n}, vb);
  interp::HostTensor C = interp::makeHostTensor(ir::ScalarType::BF16, {n, n});
  interp::RunRequest req{{{"M", n}, {"N", n}, {"K", n}}, {{"A", &A}, {"B", &B}, {"C", &C}}, {}};

  std::vector<double> ms;
  for (int r = 0; r <= reps; ++r) {  // the first run warms caches and is not counted
    auto t0 = std::chrono::steady_clock::now();
    if (!interp::run(*module->body().front(), req, diag)) {
      std::fprintf(stderr, "%s\n", diag.str().c_str());
      return 1;
    }
    auto t1 = std::chrono::steady_clock::now();
    if (r) ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  std::printf("interp bf16 gemm %lldx%lldx%lld: min %.2f ms, median %.2f ms over %d runs (%s build)\n",
              static_cast<long long>(n), static_cast<long long>(n), static_cast<long long>(n), ms.front(),
              ms[ms.size() / 2], reps,
#ifdef NDEBUG
              "optimised"
#else
              "unoptimised"
#endif
  );
  return 0;
}
