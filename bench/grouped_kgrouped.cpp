// kiln_grouped_bench --layout kgrouped: groups along K, the MoE weight gradient
// (torch._grouped_mm's 2D x 2D case; ops/grouped_programs.h, Layout::GroupsAlongK):
//   dW_g [M, N] = X_gᵀ · dY_g,  X [T, M] and dY [T, N] row-major, group g's tokens rows
//   offsets[g-1] .. offsets[g] of both, dW f32 [G, M, N], an empty group all zeros.
// The default shape is the weight gradient of the ragged layout's forward (same tokens per expert,
// M = that layout's K, 7168; N = 4096). Baselines: cuBLAS one call per group (a memset for an
// empty group), and the same total work as one dense GEMM (M x N x T, f32 out). Kiln's kernel is
// the family's pick for the program, built and checked against cuBLAS's per-group output before
// its time is trusted; where no strategy lowers the program yet the row says why
// ("not built: ..."), and the baselines are still measured.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

#include <fmt/format.h>

#include "bench/bench_rows.h"
#include "bench/bench_support.h"
#include "bench/grouped_kiln_row.h"
#include "bench/grouped_ragged.h"
#include "kiln/kernel.h"
#include "kiln/runtime/driver.h"
#include "kiln/target.h"
#include "ops/grouped_programs.h"
#include "schedule/config.h"

namespace kiln::bench {
namespace {

// f32 outputs: finite wherever ref is, relative Frobenius error under 1e-3 (both sum bf16 products
// in f32; only the order differs).
bool closeF32(const std::vector<float>& x, const std::vector<float>& ref, double* rel) {
  double num = 0, den = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isfinite(ref[i]) && !std::isfinite(x[i])) return *rel = INFINITY, false;
    const double d = double(x[i]) - ref[i];
    num += d * d, den += double(ref[i]) * ref[i];
  }
  *rel = std::sqrt(num / std::max(den, 1e-300));
  return *rel < 1e-3;
}

std::vector<float> copyF32(const DeviceBuffer& d) {
  std::vector<float> h(d.bytes / 4);
  check(cudaMemcpy(h.data(), d.ptr, d.bytes, cudaMemcpyDeviceToHost), "copy output");
  return h;
}

void poisonF32(DeviceBuffer& d) { check(cudaMemset(d.ptr, 0xff, d.bytes), "poison output"); }  // NaN

}  // namespace

nlohmann::json runKGrouped(const RaggedOptions& o) {
  runtime::Driver* drv = driverOrExplain("kiln_grouped_bench");
  if (!drv) std::exit(3);
  runtime::Context ctx = runtime::Context::primary(*drv);
  const int G = int(o.rows.size()), M = o.K, N = o.N;
  std::vector<int32_t> offs;
  int T = 0;
  for (int r : o.rows) offs.push_back(T += r);
  std::printf("[kgrouped BF16 -> f32: G=%d, tokens", G);
  for (int r : o.rows) std::printf(" %d", r);
  std::printf(" (%d in all), M=%d, N=%d]\n", T, M, N);
  nlohmann::json row = {{"layout", "kgrouped"}, {"fp8", false}, {"rows", o.rows}, {"M", M}, {"N", N},
                        {"total_tokens", T}, {"kiln", nlohmann::json::array()}};
  const double flops = 2.0 * double(M) * N * T;
  auto tf = [&](double ms) { return ms > 0 ? flops / ms / 1e9 : 0.0; };

  auto X = randomBf16(size_t(T) * M, 3), dY = randomBf16(size_t(T) * N, 4);
  DeviceBuffer dX(X.size() * 2), dDY(dY.size() * 2), dOffs(size_t(G) * 4), dRef(size_t(G) * M * N * 4),
      dC(size_t(G) * M * N * 4), dD(size_t(M) * N * 4);
  check(cudaMemcpy(dX.ptr, X.data(), dX.bytes, cudaMemcpyHostToDevice), "copy X");
  check(cudaMemcpy(dDY.ptr, dY.data(), dDY.bytes, cudaMemcpyHostToDevice), "copy dY");
  check(cudaMemcpy(dOffs.ptr, offs.data(), dOffs.bytes, cudaMemcpyHostToDevice), "copy offsets");
  cublasHandle_t h;
  check(cublasCreate(&h), "cublasCreate");
  const float alpha = 1.0f, beta = 0.0f;
  auto* x16 = static_cast<uint16_t*>(dX.ptr);
  auto* dy16 = static_cast<uint16_t*>(dDY.ptr);
  // Column-major view: dW_gᵀ (N x M, ld N) = dY_gᵀ (dY_g stored [t][N]: N x t, ld N) · X_g (X_g
  // stored [t][M]: M x t, ld M, taken transposed).
  auto perGroup = [&](cudaStream_t st) {
    check(cublasSetStream(h, st), "cublasSetStream");
    for (int g = 0, lo = 0; g < G; lo = offs[size_t(g)], ++g) {
      float* out = static_cast<float*>(dRef.ptr) + size_t(g) * M * N;
      const int t = offs[size_t(g)] - lo;
      if (t == 0) {
        check(cudaMemsetAsync(out, 0, size_t(M) * N * 4, st), "zero an empty group");
        continue;
      }
      check(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_T, N, M, t, &alpha, dy16 + size_t(lo) * N, CUDA_R_16BF, N,
                         x16 + size_t(lo) * M, CUDA_R_16BF, M, &beta, out, CUDA_R_32F, N, CUBLAS_COMPUTE_32F,
                         CUBLAS_GEMM_DEFAULT),
            "cublasGemmEx (group)");
    }
  };
  poisonF32(dRef);
  perGroup(nullptr);
  check(cudaDeviceSynchronize(), "cuBLAS per group");
  const std::vector<float> ref = copyF32(dRef);
  // 64 sampled outputs against fp64 sums of the group's tokens.
  std::mt19937_64 rng(7);
  double worst = 0;
  for (int s = 0; s < 64; ++s) {
    const int g = int(rng() % uint64_t(G)), m = int(rng() % uint64_t(M)), n = int(rng() % uint64_t(N));
    double exact = 0, terms = 0;
    for (int k = g ? offs[size_t(g - 1)] : 0; k < offs[size_t(g)]; ++k) {
      const double p = double(bf16ToFloat(X[size_t(k) * M + m])) * bf16ToFloat(dY[size_t(k) * N + n]);
      exact += p, terms += p * p;
    }
    const double got = ref[(size_t(g) * M + m) * N + n];
    worst = std::max(worst, std::isfinite(got) ? std::abs(got - exact) / std::max({std::sqrt(terms), 1e-30}) : INFINITY);
  }
  std::printf("  cuBLAS, one call per group: sampled against fp64, err %.1e%s\n", worst,
              worst <= 1e-3 ? "" : " -- BAD: no figures are trusted");
  row["reference_sample_err"] = worst;
  // The same work as one dense GEMM: dW (M x N) = Xᵀ · dY over all T tokens.
  auto dense = [&](cudaStream_t st) {
    check(cublasSetStream(h, st), "cublasSetStream");
    check(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_T, N, M, T, &alpha, dy16, CUDA_R_16BF, N, x16, CUDA_R_16BF, M, &beta,
                       dD.ptr, CUDA_R_32F, N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
          "cublasGemmEx (dense)");
  };
  const std::vector<double> baseMs = alternatingMediansMs({perGroup, dense}, o.warmup, o.reps, nullptr);
  row["cublas_per_group_ms"] = baseMs[0];
  row["cublas_dense_same_work_ms"] = baseMs[1];
  std::printf("  cuBLAS one call per group %.4f ms %.0f TFLOP/s; dense GEMM of the same work %.4f ms %.0f TFLOP/s\n",
              baseMs[0], tf(baseMs[0]), baseMs[1], tf(baseMs[1]));

  auto program = ops::groupedGemmProgram({ops::GroupedGemmSpec::Layout::GroupsAlongK, ir::ScalarType::BF16,
                                          ir::ScalarType::F32},
                                         "kgrouped_grouped_gemm");
  const std::map<std::string, int64_t> dims{{"G", G}, {"M", M}, {"N", N}, {"K", T}};
  RaggedOptions pickOpts = o;
  pickOpts.fp8 = false;
  KilnRowSpec spec;
  spec.program = program.get();
  spec.ptrs = {uint64_t(dX.ptr), uint64_t(dDY.ptr), uint64_t(dOffs.ptr), uint64_t(dC.ptr)};
  spec.dims = dims;
  spec.flops = flops;
  spec.check = [&](const Launch& run, nlohmann::json& k) {
    double rel = 0;
    poisonF32(dC);
    run(nullptr);
    check(cudaDeviceSynchronize(), "Kiln kgrouped");
    const bool ok = closeF32(copyF32(dC), ref, &rel);
    k["rel_err"] = rel;
    return ok;
  };
  spec.time = [&](const Launch& run) { return medianMs(run, o.warmup, o.reps, nullptr); };
  spec.describe = [&](nlohmann::json& k) {
    const double ms = k["ms"];
    k["vs_cublas_per_group"] = ms > 0 ? baseMs[0] / ms : 0.0;
    k["vs_dense_same_work"] = ms > 0 ? baseMs[1] / ms : 0.0;
    return fmt::format("(rel err {:.1e}; {:.2f}x cuBLAS per group, {:.2f}x the dense GEMM of the same work)",
                       k.value("rel_err", 0.0), double(k["vs_cublas_per_group"]), double(k["vs_dense_same_work"]));
  };
  for (const std::string& line : raggedConfigs(pickOpts, *program->body().front(), dims))
    row["kiln"].push_back(kilnRow(ctx, line, spec).json);
  cublasDestroy(h);
  return row;
}

}  // namespace kiln::bench
