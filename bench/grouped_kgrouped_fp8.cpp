// kiln_grouped_bench --layout kgrouped, FP8: the blockwise weight gradient (DeepGEMM's k-grouped
// FP8 wgrad; ops/grouped_programs.h, Layout::GroupsAlongK with e4m3 operands):
//   dW_g [M, N] = sum over group g's 128-token blocks kb of (A[:, kb] · B[kb, :]) x scale_a[kb][m] x scale_b[kb][n]
// A [M][T] and B [N][T] (both K-major: tokens contiguous), scale_a [kb][M] and scale_b [kb][N]
// (f32, rows contiguous), dW f32 [G, M, N]. Each group's tokens are a multiple of 128 (the recipe's
// rule; kgroupedFp8Tokens rounds the BF16 case's up). Baselines: cuBLASLt's blockwise GEMM
// (VEC128_32F for both operands) once per group, on each group's tokens packed into their own
// buffers (cuBLASLt takes a leading dimension equal to the tokens; the packing is not timed), and
// once over the same total work; f32 out where cuBLASLt takes it in this mode, else bf16 (said in
// the row). Kiln's kernel is checked against fp64 samples with the exact scale semantics and
// against cuBLASLt's per-group output before its time is trusted.
#include <cublasLt.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

#include <fmt/format.h>

#include "bench/bench_support.h"
#include "bench/fp8_scaled.h"
#include "bench/grouped_kiln_row.h"
#include "bench/grouped_ragged.h"
#include "kiln/float_formats.h"
#include "ops/grouped_programs.h"

namespace kiln::bench {

std::vector<int> kgroupedFp8Tokens(const std::vector<int>& rows) {
  std::vector<int> out;
  for (int r : rows) out.push_back((r + 127) / 128 * 128);
  return out;
}

namespace {

std::vector<float> hostF32(const DeviceBuffer& d, bool bf16) {
  std::vector<float> h(d.bytes / (bf16 ? 2 : 4));
  if (!bf16) {
    check(cudaMemcpy(h.data(), d.ptr, d.bytes, cudaMemcpyDeviceToHost), "copy output");
    return h;
  }
  std::vector<uint16_t> b(h.size());
  check(cudaMemcpy(b.data(), d.ptr, d.bytes, cudaMemcpyDeviceToHost), "copy output");
  for (size_t i = 0; i < b.size(); ++i) h[i] = bf16ToFloat(b[i]);
  return h;
}

// Relative Frobenius distance; infinite where `ref` is finite and `x` is not.
double relDistance(const std::vector<float>& x, const std::vector<float>& ref) {
  double num = 0, den = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isfinite(ref[i]) && !std::isfinite(x[i])) return INFINITY;
    const double d = double(x[i]) - ref[i];
    num += d * d, den += double(ref[i]) * ref[i];
  }
  return std::sqrt(num / std::max(den, 1e-300));
}

}  // namespace

nlohmann::json runKGroupedFp8(const RaggedOptions& o) {
  runtime::Driver* drv = driverOrExplain("kiln_grouped_bench");
  if (!drv) std::exit(3);
  runtime::Context ctx = runtime::Context::primary(*drv);
  const std::vector<int> tokens = kgroupedFp8Tokens(o.rows);
  const int G = int(tokens.size()), M = o.K, N = o.N;
  std::vector<int32_t> offs;
  int T = 0;
  for (int t : tokens) offs.push_back(T += t);
  const int kb = T / 128;
  std::printf("[kgrouped FP8 1x128 x 1x128 -> f32: G=%d, tokens", G);
  for (int t : tokens) std::printf(" %d", t);
  std::printf(" (%d in all), M=%d, N=%d]\n", T, M, N);
  nlohmann::json row = {{"layout", "kgrouped"}, {"fp8", true}, {"rows", o.rows}, {"tokens", tokens}, {"M", M},
                        {"N", N}, {"total_tokens", T}, {"kiln", nlohmann::json::array()}};
  const double flops = 2.0 * double(M) * N * T;
  auto tf = [&](double ms) { return ms > 0 ? flops / ms / 1e9 : 0.0; };

  auto A = randomE4m3(size_t(M) * T, 5), B = randomE4m3(size_t(N) * T, 6);
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<float> u(0.5f, 2.0f);
  std::vector<float> sa(size_t(kb) * M), sb(size_t(kb) * N);
  for (float& x : sa) x = u(rng);
  for (float& x : sb) x = u(rng);
  const size_t outElems = size_t(G) * M * N;
  DeviceBuffer dA(A.size()), dB(B.size()), dSa(sa.size() * 4), dSb(sb.size() * 4), dOffs(size_t(G) * 4),
      dC(outElems * 4), dPa(A.size()), dPb(B.size()), ws(32u << 20);
  check(cudaMemcpy(dA.ptr, A.data(), dA.bytes, cudaMemcpyHostToDevice), "copy A");
  check(cudaMemcpy(dB.ptr, B.data(), dB.bytes, cudaMemcpyHostToDevice), "copy B");
  check(cudaMemcpy(dSa.ptr, sa.data(), dSa.bytes, cudaMemcpyHostToDevice), "copy scale_a");
  check(cudaMemcpy(dSb.ptr, sb.data(), dSb.bytes, cudaMemcpyHostToDevice), "copy scale_b");
  check(cudaMemcpy(dOffs.ptr, offs.data(), dOffs.bytes, cudaMemcpyHostToDevice), "copy offsets");

  // cuBLASLt per group, on packed copies of the group's tokens ([M][t] and [N][t]); the group's
  // scale rows are contiguous in [kb][M] and [kb][N] already.
  cublasLtHandle_t lt;
  check(cublasLtCreate(&lt), "cublasLtCreate");
  auto* pa = static_cast<uint8_t*>(dPa.ptr);
  auto* pb = static_cast<uint8_t*>(dPb.ptr);
  auto build = [&](cudaDataType_t out, std::vector<std::unique_ptr<LtScaledGemm>>& gemms) {
    gemms.clear();
    for (int g = 0, lo = 0; g < G; lo = offs[size_t(g)], ++g) {
      const int t = offs[size_t(g)] - lo;
      if (t == 0) {
        gemms.push_back(nullptr);
        continue;
      }
      gemms.push_back(std::make_unique<LtScaledGemm>(lt, Shape{M, N, t}, ops::Fp8Scaling::Block1x128x1x128,
                                                     static_cast<float*>(dSa.ptr) + size_t(lo / 128) * M,
                                                     static_cast<float*>(dSb.ptr) + size_t(lo / 128) * N, false, ws, out));
      if (!gemms.back()->ok()) return gemms.back()->why();
    }
    return std::string();
  };
  std::vector<std::unique_ptr<LtScaledGemm>> perGroup;
  cudaDataType_t outType = CUDA_R_32F;
  if (std::string why = build(outType, perGroup); !why.empty()) {
    std::printf("  cuBLASLt blockwise with f32 out: %s; bf16 out instead\n", why.c_str());
    outType = CUDA_R_16BF;
    if (std::string why16 = build(outType, perGroup); !why16.empty())
      throw std::runtime_error("cuBLASLt blockwise 1x128 x 1x128 unavailable: " + why16);
  }
  const size_t outBytes = outType == CUDA_R_32F ? 4 : 2;
  row["cublaslt_out"] = outType == CUDA_R_32F ? "f32" : "bf16";
  DeviceBuffer dRef(outElems * outBytes), dD(size_t(M) * N * outBytes);
  for (int g = 0, lo = 0; g < G; lo = offs[size_t(g)], ++g) {  // pack each group's tokens
    const int t = offs[size_t(g)] - lo;
    if (t == 0) continue;
    check(cudaMemcpy2D(pa + size_t(lo) * M, size_t(t), static_cast<uint8_t*>(dA.ptr) + lo, size_t(T), size_t(t),
                       size_t(M), cudaMemcpyDeviceToDevice),
          "pack A");
    check(cudaMemcpy2D(pb + size_t(lo) * N, size_t(t), static_cast<uint8_t*>(dB.ptr) + lo, size_t(T), size_t(t),
                       size_t(N), cudaMemcpyDeviceToDevice),
          "pack B");
  }
  auto runPerGroup = [&](cudaStream_t st) {
    for (int g = 0, lo = 0; g < G; lo = offs[size_t(g)], ++g) {
      char* out = static_cast<char*>(dRef.ptr) + size_t(g) * M * N * outBytes;
      if (!perGroup[size_t(g)]) {
        check(cudaMemsetAsync(out, 0, size_t(M) * N * outBytes, st), "zero an empty group");
        continue;
      }
      perGroup[size_t(g)]->run(pa + size_t(lo) * M, pb + size_t(lo) * N, out, st);
    }
  };
  LtScaledGemm denseLt(lt, Shape{M, N, T}, ops::Fp8Scaling::Block1x128x1x128, dSa.ptr, dSb.ptr, false, ws, outType);
  if (!denseLt.ok()) throw std::runtime_error("cuBLASLt blockwise (dense): " + denseLt.why());
  auto runDense = [&](cudaStream_t st) { denseLt.run(dA.ptr, dB.ptr, dD.ptr, st); };

  // fp64 samples of an output [G][M][N] with the exact scale semantics, relative to the size of
  // the scaled terms.
  auto sampleError = [&](const std::vector<float>& C) {
    std::mt19937_64 pick(7);
    double worst = 0;
    for (int s = 0; s < 64; ++s) {
      const int g = int(pick() % uint64_t(G)), m = int(pick() % uint64_t(M)), n = int(pick() % uint64_t(N));
      double exact = 0, terms = 0;
      for (int k0 = g ? offs[size_t(g - 1)] : 0; k0 < offs[size_t(g)]; k0 += 128) {
        double slice = 0, sq = 0;
        for (int k = k0; k < k0 + 128; ++k) {
          const double t = double(fp8BitsToFloat(A[size_t(m) * T + size_t(k)], Fp8Format::E4M3)) *
                           fp8BitsToFloat(B[size_t(n) * T + size_t(k)], Fp8Format::E4M3);
          slice += t, sq += t * t;
        }
        const double scale = double(sa[size_t(k0 / 128) * M + size_t(m)]) * sb[size_t(k0 / 128) * N + size_t(n)];
        exact += slice * scale, terms += sq * scale * scale;
      }
      const double got = C[(size_t(g) * M + size_t(m)) * N + size_t(n)];
      worst = std::max(worst, std::isfinite(got) ? std::abs(got - exact) / std::max(std::sqrt(terms), 1e-30) : INFINITY);
    }
    return worst;
  };
  check(cudaMemset(dRef.ptr, 0xff, dRef.bytes), "poison reference");
  runPerGroup(nullptr);
  check(cudaDeviceSynchronize(), "cuBLASLt per group");
  const std::vector<float> ref = hostF32(dRef, outType == CUDA_R_16BF);
  const double refErr = sampleError(ref), refBound = outType == CUDA_R_32F ? 1e-3 : 2e-2;
  const std::vector<double> baseMs = alternatingMediansMs({runPerGroup, runDense}, o.warmup, o.reps, nullptr);
  row["reference_sample_err"] = refErr;
  row["cublaslt_per_group_ms"] = baseMs[0];
  row["cublaslt_dense_same_work_ms"] = baseMs[1];
  std::printf("  cuBLASLt blockwise (%s out), one call per group %.4f ms %.0f TFLOP/s (fp64 sample err %.1e%s); dense "
              "GEMM of the same work %.4f ms %.0f TFLOP/s\n",
              outType == CUDA_R_32F ? "f32" : "bf16", baseMs[0], tf(baseMs[0]), refErr, refErr <= refBound ? "" : ": BAD",
              baseMs[1], tf(baseMs[1]));

  auto program = ops::groupedGemmProgram({ops::GroupedGemmSpec::Layout::GroupsAlongK, ir::ScalarType::F8E4M3,
                                          ir::ScalarType::F32},
                                         "kgrouped_grouped_fp8");
  const std::map<std::string, int64_t> dims{{"G", G}, {"M", M}, {"N", N}, {"K", T}};
  KilnRowSpec spec;
  spec.program = program.get();
  // A, B, scale_a, scale_b, offsets, C (ops/grouped_programs.h).
  spec.ptrs = {uint64_t(dA.ptr), uint64_t(dB.ptr), uint64_t(dSa.ptr), uint64_t(dSb.ptr), uint64_t(dOffs.ptr),
               uint64_t(dC.ptr)};
  spec.dims = dims;
  spec.flops = flops;
  spec.check = [&](const Launch& run, nlohmann::json& k) {
    check(cudaMemset(dC.ptr, 0xff, dC.bytes), "poison output");  // NaN
    run(nullptr);
    check(cudaDeviceSynchronize(), "Kiln kgrouped FP8");
    const std::vector<float> got = hostF32(dC, false);
    const double err = sampleError(got), rel = relDistance(got, ref);
    k["sample_err"] = err;
    k["rel_err"] = rel;
    return err <= 1e-3 && rel <= refBound;
  };
  spec.time = [&](const Launch& run) { return alternatingMedianMs(run, runDense, o.warmup, o.reps, nullptr).first; };
  spec.describe = [&](nlohmann::json& k) {
    const double ms = k["ms"];
    k["vs_cublaslt_per_group"] = ms > 0 ? baseMs[0] / ms : 0.0;
    k["vs_dense_same_work"] = ms > 0 ? baseMs[1] / ms : 0.0;
    return fmt::format("(fp64 err {:.1e}, {:.1e} from cuBLASLt; {:.2f}x cuBLASLt per group, {:.2f}x the dense GEMM of "
                       "the same work)",
                       k.value("sample_err", 0.0), k.value("rel_err", 0.0), double(k["vs_cublaslt_per_group"]),
                       double(k["vs_dense_same_work"]));
  };
  RaggedOptions pickOpts = o;
  pickOpts.fp8 = true;
  for (const std::string& line : raggedConfigs(pickOpts, *program->body().front(), dims))
    row["kiln"].push_back(kilnRow(ctx, line, spec).json);
  cublasLtDestroy(lt);
  return row;
}

}  // namespace kiln::bench
