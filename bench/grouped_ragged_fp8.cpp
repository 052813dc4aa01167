// The FP8 (1x128 x 128x128 block scales) ragged and masked layouts of kiln_grouped_bench (see
// grouped_ragged.h). cuBLASLt has no grouped blockwise GEMM: the baselines are cuBLASLt's blockwise
// GEMM once per group (each group's scale_a copied out packed, as VEC128_32F takes it) and once
// over the same total work; Kiln's output is checked against an fp64 evaluation of sampled
// outputs with the groups' own scales.
#include <cmath>
#include <cstdio>
#include <random>

#include <fmt/format.h>

#include "bench/bench_rows.h"
#include "bench/bench_support.h"
#include "bench/fp8_scaled.h"
#include "bench/grouped_kiln_row.h"
#include "bench/grouped_ragged.h"
#include "kiln/float_formats.h"
#include "kiln/kernel.h"
#include "kiln/runtime/driver.h"
#include "kiln/target.h"
#include "ops/grouped_programs.h"
#include "schedule/config.h"

namespace kiln::bench {

namespace {

// DeepGEMM's README (2025-02, H800 SXM5), FP8 1x128 x 128x128: contiguous and masked layouts.
struct Published {
  bool masked;
  int groups, rows, N, K, tflops;
};
const Published kDeepGemm[] = {{false, 4, 8192, 4096, 7168, 1297}, {false, 4, 8192, 7168, 2048, 1099},
                               {false, 8, 4096, 4096, 7168, 1288}, {false, 8, 4096, 7168, 2048, 1093},
                               {true, 1, 1024, 4096, 7168, 1233},  {true, 1, 1024, 7168, 2048, 925},
                               {true, 2, 512, 4096, 7168, 1040},   {true, 2, 512, 7168, 2048, 916},
                               {true, 4, 256, 4096, 7168, 932},    {true, 4, 256, 7168, 2048, 815}};

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

nlohmann::json runRaggedFp8(const RaggedOptions& o) {
  using L = ops::GroupedGemmSpec::Layout;
  runtime::Driver* drv = driverOrExplain("kiln_grouped_bench");
  if (!drv) std::exit(3);
  runtime::Context ctx = runtime::Context::primary(*drv);
  const GroupLayout lay = layoutOf(o);
  const int G = lay.G, N = o.N, K = o.K;
  const int64_t kb = ceilDiv(K, 128), nb = ceilDiv(N, 128);
  std::printf("[%s FP8 1x128x128x128: G=%d, rows", o.masked ? "masked" : "ragged", G);
  for (int r : o.rows) std::printf(" %d", r);
  std::printf(" (%d in all), N=%d, K=%d]\n", lay.total, N, K);
  nlohmann::json row = {{"layout", o.masked ? "masked" : "ragged"}, {"fp8", true}, {"rows", o.rows}, {"N", N},
                        {"K", K}, {"total_rows", lay.total}, {"kiln", nlohmann::json::array()}};
  const double flops = 2.0 * double(lay.total) * N * K;
  auto tf = [&](double ms) { return ms > 0 ? flops / ms / 1e9 : 0.0; };

  // A [Mbuf][K], B [G][N][K], scale_b [G][nb][kb]; scale_a as the program declares it
  // (ops/grouped_programs.cpp), rows contiguous: [kb][Mbuf] by offsets, [G][kb][capacity] by counts.
  // (Masked FP8 once filled and checked it as [kb][Mbuf]: every Kiln kernel read the other groups'
  // scales and was reported wrong, sample err ~1, wherever G > 1.)
  auto A = randomE4m3(size_t(lay.Mbuf) * K, 1), B = randomE4m3(size_t(G) * N * K, 2);
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<float> u(0.5f, 2.0f);
  std::vector<float> sa(static_cast<size_t>(kb * lay.Mbuf)), sb(static_cast<size_t>(G * nb * kb));
  for (float& x : sa) x = u(rng);
  for (float& x : sb) x = u(rng);
  auto saAt = [&](int64_t k, int m) {  // the scale of buffer row m, K block k
    if (!o.masked) return size_t(k * lay.Mbuf + m);
    return size_t((m / o.maxRows * kb + k) * o.maxRows + m % o.maxRows);
  };
  DeviceBuffer dA(A.size()), dB(B.size()), dSa(sa.size() * 4), dSb(sb.size() * 4), dBounds(size_t(G) * 4),
      dC(size_t(lay.Mbuf) * N * 2), dR(size_t(lay.total) * N * 2), ws(32u << 20);
  check(cudaMemcpy(dA.ptr, A.data(), dA.bytes, cudaMemcpyHostToDevice), "copy A");
  check(cudaMemcpy(dB.ptr, B.data(), dB.bytes, cudaMemcpyHostToDevice), "copy B");
  check(cudaMemcpy(dSa.ptr, sa.data(), dSa.bytes, cudaMemcpyHostToDevice), "copy scale_a");
  check(cudaMemcpy(dSb.ptr, sb.data(), dSb.bytes, cudaMemcpyHostToDevice), "copy scale_b");
  check(cudaMemcpy(dBounds.ptr, lay.bounds.data(), dBounds.bytes, cudaMemcpyHostToDevice), "copy bounds");

  // cuBLASLt per group: each group's scale_a packed [kb][m_g], its scale_b as BLK128x128 wants it.
  cublasLtHandle_t lt;
  check(cublasLtCreate(&lt), "cublasLtCreate");
  std::vector<std::unique_ptr<DeviceBuffer>> scaleBufs;
  std::vector<std::unique_ptr<LtScaledGemm>> perGroup;
  std::vector<int> groupOf;  // the group of each entry of perGroup
  for (int g = 0; g < G; ++g) {
    const int m = lay.rows[size_t(g)];
    if (m == 0) continue;
    Fp8Scales sc{ops::Fp8Scaling::Block1x128x128x128, m, N, K, kb, nb, {}, {}};
    for (int64_t k = 0; k < kb; ++k)
      for (int r = 0; r < m; ++r) sc.a.push_back(sa[saAt(k, lay.starts[size_t(g)] + r)]);
    sc.b.assign(sb.begin() + g * nb * kb, sb.begin() + (g + 1) * nb * kb);
    std::vector<float> b = padScaleB(sc);
    scaleBufs.push_back(std::make_unique<DeviceBuffer>(sc.a.size() * 4));
    check(cudaMemcpy(scaleBufs.back()->ptr, sc.a.data(), sc.a.size() * 4, cudaMemcpyHostToDevice), "copy");
    scaleBufs.push_back(std::make_unique<DeviceBuffer>(b.size() * 4));
    check(cudaMemcpy(scaleBufs.back()->ptr, b.data(), b.size() * 4, cudaMemcpyHostToDevice), "copy");
    perGroup.push_back(std::make_unique<LtScaledGemm>(lt, Shape{m, N, K}, sc.mode, scaleBufs[scaleBufs.size() - 2]->ptr,
                                                      scaleBufs.back()->ptr, false, ws));
    groupOf.push_back(g);
    if (!perGroup.back()->ok()) throw std::runtime_error("cuBLASLt blockwise unavailable: " + perGroup.back()->why());
  }
  auto runPerGroup = [&](cudaStream_t st) {
    for (size_t i = 0; i < perGroup.size(); ++i) {
      int g = groupOf[i];
      perGroup[i]->run(static_cast<uint8_t*>(dA.ptr) + size_t(lay.starts[size_t(g)]) * K,
                       static_cast<uint8_t*>(dB.ptr) + size_t(g) * N * K,
                       static_cast<uint16_t*>(dC.ptr) + size_t(lay.starts[size_t(g)]) * N, st);
    }
  };
  // The same total work as one dense blockwise GEMM (the first expert's B and scales).
  Fp8Scales dense{ops::Fp8Scaling::Block1x128x128x128, lay.total, N, K, kb, nb, {}, {}};
  dense.a.assign(size_t(kb * lay.total), 1.0f);
  dense.b.assign(sb.begin(), sb.begin() + nb * kb);
  std::vector<float> denseB = padScaleB(dense);
  DeviceBuffer dDa(dense.a.size() * 4), dDb(denseB.size() * 4);
  check(cudaMemcpy(dDa.ptr, dense.a.data(), dDa.bytes, cudaMemcpyHostToDevice), "copy");
  check(cudaMemcpy(dDb.ptr, denseB.data(), dDb.bytes, cudaMemcpyHostToDevice), "copy");
  LtScaledGemm denseLt(lt, Shape{lay.total, N, K}, dense.mode, dDa.ptr, dDb.ptr, false, ws);
  auto runDense = [&](cudaStream_t st) { denseLt.run(dA.ptr, dB.ptr, dR.ptr, st); };

  // fp64 samples of an output, with each group's own scales.
  auto sampleError = [&](const std::vector<uint16_t>& C) {
    std::mt19937_64 pick(7);
    double worst = 0;
    for (int s = 0; s < 64; ++s) {
      int m = int(pick() % uint64_t(lay.Mbuf)), n = int(pick() % uint64_t(N)), g = lay.groupOf(m);
      if (g < 0) continue;
      double exact = 0, terms = 0;
      for (int64_t k0 = 0; k0 < K; k0 += 128) {
        double slice = 0, sq = 0;
        for (int64_t k = k0; k < std::min<int64_t>(K, k0 + 128); ++k) {
          double t = double(fp8BitsToFloat(A[size_t(m) * K + k], Fp8Format::E4M3)) *
                     fp8BitsToFloat(B[(size_t(g) * N + n) * K + k], Fp8Format::E4M3);
          slice += t, sq += t * t;
        }
        double scale = double(sa[saAt(k0 / 128, m)]) * sb[size_t((g * nb + n / 128) * kb + k0 / 128)];
        exact += slice * scale, terms += sq * scale * scale;
      }
      double got = bf16ToFloat(C[size_t(m) * N + n]);
      worst = std::max(worst, std::isfinite(got) ? std::abs(got - exact) / std::max({std::sqrt(terms), std::abs(exact), 1e-30})
                                                 : INFINITY);
    }
    return worst;
  };
  poisonBf16(dC, nullptr);
  runPerGroup(nullptr);
  check(cudaDeviceSynchronize(), "cuBLASLt per group");
  std::vector<uint16_t> ref(size_t(lay.Mbuf) * N);
  check(cudaMemcpy(ref.data(), dC.ptr, dC.bytes, cudaMemcpyDeviceToHost), "copy reference");
  double refErr = sampleError(ref);
  std::vector<double> baseMs = alternatingMediansMs({runPerGroup, runDense}, o.warmup, o.reps, nullptr);
  row["reference_sample_err"] = refErr;
  row["cublaslt_per_group_ms"] = baseMs[0];
  row["cublaslt_dense_same_work_ms"] = baseMs[1];
  std::printf("  cuBLASLt blockwise, one call per group %.4f ms %.0f TFLOP/s (fp64 sample err %.1e%s); dense GEMM of "
              "the same work %.4f ms %.0f TFLOP/s\n",
              baseMs[0], tf(baseMs[0]), refErr, refErr <= 2e-2 ? "" : ": BAD", baseMs[1], tf(baseMs[1]));
  for (const auto& p : kDeepGemm)
    if (p.masked == o.masked && p.groups == G && p.N == N && p.K == K &&
        std::all_of(o.rows.begin(), o.rows.end(), [&](int r) { return r == p.rows; })) {
      row["deepgemm_h800_published_tflops"] = p.tflops;
      std::printf("  DeepGEMM, published on H800 (orientation only): %d TFLOP/s\n", p.tflops);
    }

  auto program = ops::groupedGemmProgram({o.masked ? L::Masked : L::Offsets, ir::ScalarType::F8E4M3,
                                          ir::ScalarType::BF16},
                                         o.masked ? "masked_grouped_fp8" : "ragged_grouped_fp8");
  std::map<std::string, int64_t> dims{{"G", G}, {"M", o.masked ? o.maxRows : lay.total}, {"N", N}, {"K", K}};
  // cuBLASLt's dense GEMM of the same work: the check of the pick run on one group (below).
  std::vector<uint16_t> denseRef(size_t(lay.total) * N);
  check(cudaMemcpy(denseRef.data(), dR.ptr, denseRef.size() * 2, cudaMemcpyDeviceToHost), "copy dense output");
  KilnRowSpec spec;
  spec.program = program.get();
  // A, B, scale_a, scale_b, offsets or counts, C (ops/grouped_programs.h).
  spec.ptrs = {uint64_t(dA.ptr), uint64_t(dB.ptr), uint64_t(dSa.ptr), uint64_t(dSb.ptr), uint64_t(dBounds.ptr),
               uint64_t(dC.ptr)};
  spec.dims = dims;
  spec.flops = flops;
  spec.check = [&](const Launch& run, nlohmann::json& k) {
    const CheckedRun checked = checkBf16Output(run, dC, ref);
    std::vector<uint16_t> got(ref.size());
    check(cudaMemcpy(got.data(), dC.ptr, dC.bytes, cudaMemcpyDeviceToHost), "copy output");
    const double err = sampleError(got);
    k["rel_err"] = checked.cmp.relFrobenius;
    k["sample_err"] = err;
    return checked.ok && err <= 2e-2;
  };
  spec.time = [&](const Launch& run) { return alternatingMedianMs(run, runDense, o.warmup, o.reps, nullptr).first; };
  spec.describe = [&](nlohmann::json& k) {
    const double ms = k["ms"];
    k["vs_cublaslt_per_group"] = ms > 0 ? baseMs[0] / ms : 0.0;
    k["vs_dense_same_work"] = ms > 0 ? baseMs[1] / ms : 0.0;
    return fmt::format("({:.2f}x the dense GEMM of the same work), fp64 err {:.1e}", double(k["vs_dense_same_work"]),
                       k.value("sample_err", 0.0));
  };
  const std::vector<std::string> lines = raggedConfigs(o, *program->body().front(), dims);
  for (const std::string& line : lines) {
    KilnRow k = kilnRow(ctx, line, spec);
    // The pick on one group of all the rows with the dense GEMM's scales (scale_a ones, the first
    // expert's scale_b): the same kernel on the dense problem (grouped_ragged.cpp, timeOneGroup).
    if (&line == &lines.front() && !o.masked && k.ms > 0) {
      const int32_t all = lay.total;
      DeviceBuffer dOne(4);
      check(cudaMemcpy(dOne.ptr, &all, 4, cudaMemcpyHostToDevice), "copy bounds");
      std::map<std::string, int64_t> one = dims;
      one["G"] = 1;
      const std::vector<uint64_t> onePtrs = {uint64_t(dA.ptr),  uint64_t(dB.ptr),   uint64_t(dDa.ptr),
                                             uint64_t(dSb.ptr), uint64_t(dOne.ptr), uint64_t(dC.ptr)};
      auto runOne = [&](cudaStream_t st) { k.kernel->launch(ctx, st, onePtrs, {}, one); };
      double oneMs = 0;
      CheckedRun oneChecked;
      std::optional<std::string> oneStatus = guardedRow([&] {
        oneChecked = checkBf16Output(runOne, dC, denseRef);
        if (oneChecked.ok) oneMs = medianMs(runOne, o.warmup, o.reps, nullptr);
      });
      k.json["one_group_ms"] = oneMs;
      k.json["one_group_correct"] = oneChecked.ok;
      k.json["vs_one_group"] = oneMs > 0 ? oneMs / k.ms : 0.0;
      std::printf("    the same kernel on one group of all %d rows: %s %.4f ms (the groups run at %.2fx of it)\n", all,
                  oneStatus ? oneStatus->c_str() : oneChecked.ok ? "ok" : "BAD", oneMs, oneMs > 0 ? oneMs / k.ms : 0.0);
    }
    row["kiln"].push_back(k.json);
  }
  cublasLtDestroy(lt);
  return row;
}

}  // namespace kiln::bench
