// The ragged and masked layouts of kiln_grouped_bench (see grouped_ragged.h).
#include "bench/grouped_ragged.h"

#include <cublasLt.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>

#include <fmt/format.h>

#include "bench/bench_rows.h"
#include "bench/bench_support.h"
#include "bench/fp8_scaled.h"
#include "bench/grouped_kiln_row.h"
#include "kiln/kernel.h"
#include "kiln/resource_report.h"
#include "kiln/runtime/driver.h"
#include "kiln/target.h"
#include "ops/default_schedule.h"
#include "ops/gemm_bf16.h"
#include "ops/gemm_fp8.h"
#include "ops/grouped_programs.h"
#include "schedule/config.h"

namespace kiln::bench {

std::vector<int> moeRows(int groups, int lo, int hi, uint64_t seed) {
  // splitmix64, written the same in bench/grouped_torch.py, so both time the same groups.
  std::vector<int> rows(static_cast<size_t>(groups));
  for (int& r : rows) {
    uint64_t z = (seed += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    r = int(lo / 16 + z % uint64_t(hi / 16 - lo / 16 + 1)) * 16;
  }
  return rows;
}

GroupLayout layoutOf(const RaggedOptions& o) {
  GroupLayout l;
  l.G = int(o.rows.size());
  l.total = std::accumulate(o.rows.begin(), o.rows.end(), 0);
  l.Mbuf = o.masked ? l.G * o.maxRows : l.total;
  for (int g = 0, end = 0; g < l.G; ++g) {
    l.starts.push_back(o.masked ? g * o.maxRows : end);
    end += o.rows[size_t(g)];
    l.rows.push_back(o.rows[size_t(g)]);
    l.bounds.push_back(o.masked ? o.rows[size_t(g)] : end);
  }
  return l;
}

int GroupLayout::groupOf(int m) const {
  for (int g = 0; g < G; ++g)
    if (m >= starts[size_t(g)] && m < starts[size_t(g)] + rows[size_t(g)]) return g;
  return -1;
}

namespace {

// The largest error of 64 sampled outputs of the bf16 C against fp64 sums of A_g · B_g, relative to
// the terms' size; `rowOf(m)` gives A's row and B's group of output row m (-1: owned by no group).
double sampleError(const std::vector<uint16_t>& A, const std::vector<uint16_t>& Bt, const std::vector<uint16_t>& C,
                   int rows, int N, int K, const std::function<std::pair<long, int>(int)>& rowOf) {
  std::mt19937_64 rng(7);
  double worst = 0;
  for (int s = 0; s < 64; ++s) {
    int m = int(rng() % uint64_t(rows)), n = int(rng() % uint64_t(N));
    auto [arow, g] = rowOf(m);
    if (g < 0) continue;
    double exact = 0, terms = 0;
    for (int k = 0; k < K; ++k) {
      double t = double(bf16ToFloat(A[size_t(arow) * K + k])) * bf16ToFloat(Bt[(size_t(g) * N + n) * K + k]);
      exact += t, terms += t * t;
    }
    double got = bf16ToFloat(C[size_t(m) * N + n]);
    worst = std::max(worst, std::isfinite(got) ? std::abs(got - exact) / std::max({std::sqrt(terms), std::abs(exact), 1e-30})
                                               : INFINITY);
  }
  return worst;
}

}  // namespace

std::vector<std::string> raggedConfigs(const RaggedOptions& o, const ir::Operation& program,
                                       const std::map<std::string, int64_t>& dims) {
  if (!o.configs.empty()) return o.configs;
  std::vector<std::string> lines;
  const Target target = Target::sm90a();
  const ops::DefaultSchedule pick = ops::defaultSchedule(program, target, dims);
  std::printf("  Kiln's pick: %s\n", pick.why.c_str());
  if (pick.fromFamily) lines.push_back(pick.config.str());
  // A stream-K pick (the last partial wave shared out, docs/grouped-gemm.md): its best-ranked
  // data-parallel rival beside it, so the run measures what stream-K gives.
  if (pick.fromFamily && pick.config.streamK)
    for (const ops::RankedSchedule& r : ops::rankedSchedules(program, target, dims))
      if (!r.family.empty() && !r.config.streamK) {
        std::printf("  data-parallel rival: %s\n", r.variant.c_str());
        lines.push_back(r.config.str());
        break;
      }
  // The pick's twins that differ only in group_m (the ragged walk's bands stop at group ends, so
  // the band height sets how often each group's B is read: docs/grouped-gemm.md, "Bands that stop
  // at group ends"), so one run measures what the band height moves.
  if (pick.fromFamily)
    for (const ops::RankedSchedule& r : ops::rankedSchedules(program, target, dims)) {
      Config twin = r.config;
      twin.groupM = pick.config.groupM;
      if (!r.family.empty() && r.config.groupM != pick.config.groupM && twin == pick.config) {
        std::printf("  group_m twin: %s\n", r.variant.c_str());
        lines.push_back(r.config.str());
      }
    }
  // A ping-pong pick (groups along K, where one warpgroup's f32 store runs under the other's K
  // loop: docs/grouped-gemm.md): its best-ranked cooperative rival beside it, so the run measures
  // what the overlap gives.
  if (pick.fromFamily && pick.config.consumers == Consumers::Pingpong)
    for (const ops::RankedSchedule& r : ops::rankedSchedules(program, target, dims))
      if (!r.family.empty() && r.config.consumers == Consumers::Cooperative) {
        std::printf("  cooperative rival: %s\n", r.variant.c_str());
        lines.push_back(r.config.str());
        break;
      }
  // An f32 output's pick stores by TMA (32-column boxes, since 2026-12-06); its twin storing from
  // registers (what the pick was before) beside it, so one run shows what the staged f32 store moves.
  bool f32Out = false;
  for (const auto& op : program.body().operations())
    if (op->is("tile.output")) f32Out = op->result()->type().elem() == ir::ScalarType::F32;
  if (pick.fromFamily && f32Out && pick.config.epilogue == EpilogueStore::Tma)
    lines.push_back(ops::withDirectStore(pick.config).str());
  auto add = [&](const Config& c) {
    if (c.raster == Raster::Row && (o.masked || c.bm >= 128) &&
        std::find(lines.begin(), lines.end(), c.str()) == lines.end())
      lines.push_back(c.str());
  };
  if (o.fp8)
    for (const auto& v : ops::gemmFp8Variants()) add(v.config);
  else
    for (const auto& v : ops::gemmBf16Variants())
      if (v.config.strategy == "sm90_ws_persistent") add(v.config);
  return lines;
}

namespace {

// One timed, checked run of the ragged kernel over the group ends in `dEnds` (`dims` holds G):
// what the one-group and rounded-groups rows share. Its time is 0 unless the output matched `ref`.
struct BoundsRun {
  double ms = 0;
  CheckedRun checked;
  std::optional<std::string> status;
  const char* word() const { return status ? status->c_str() : checked.ok ? "ok" : "BAD"; }
};
BoundsRun timeWithBounds(const Kernel& kernel, const runtime::Context& ctx, DeviceBuffer& dA, DeviceBuffer& dB,
                         DeviceBuffer& dEnds, DeviceBuffer& dC, const std::vector<uint16_t>& ref,
                         const std::map<std::string, int64_t>& dims, const RaggedOptions& o) {
  const std::vector<uint64_t> ptrs = {uint64_t(dA.ptr), uint64_t(dB.ptr), uint64_t(dEnds.ptr), uint64_t(dC.ptr)};
  auto run = [&](cudaStream_t st) { kernel.launch(ctx, st, ptrs, {}, dims); };
  BoundsRun r;
  r.status = guardedRow([&] {
    r.checked = checkBf16Output(run, dC, ref);
    if (r.checked.ok) r.ms = medianMs(run, o.warmup, o.reps, nullptr);
  });
  return r;
}

// The same kernel on one group of every row (offsets {total}, B the first expert's): the dense
// problem of the same work through the same code and walk. Its time against the groups' tells
// what the groups cost (each group's rows rounded up to whole tiles, the walk) from what the
// kernel costs against cuBLAS. Checked against cuBLAS's dense GEMM's output.
void timeOneGroup(nlohmann::json& k, const Kernel& kernel, const runtime::Context& ctx, DeviceBuffer& dA, DeviceBuffer& dB,
                  DeviceBuffer& dC, const std::vector<uint16_t>& denseRef, std::map<std::string, int64_t> dims,
                  const RaggedOptions& o) {
  const int32_t all = int32_t(dims.at("M"));
  DeviceBuffer dOne(4);
  check(cudaMemcpy(dOne.ptr, &all, 4, cudaMemcpyHostToDevice), "copy bounds");
  dims["G"] = 1;
  const BoundsRun r = timeWithBounds(kernel, ctx, dA, dB, dOne, dC, denseRef, dims, o);
  const double groupsMs = k.value("ms", 0.0), vs = r.ms > 0 && groupsMs > 0 ? r.ms / groupsMs : 0.0;
  k["one_group_ms"] = r.ms;
  k["one_group_correct"] = r.checked.ok;
  k["vs_one_group"] = vs;
  std::printf("    the same kernel on one group of all %d rows: %s %.4f ms (the groups run at %.2fx of it)\n", all,
              r.word(), r.ms, vs);
}

// The same kernel on the same groups with each group's rows rounded to whole tiles of bm (the
// nearest multiple, then whole tiles moved so that they add up to the same rows: 97 tile rows for
// the MoE shape, as its dense problem has): what the groups cost without the rounding (their B
// matrices, the group search) apart from what the rounding costs (partial tiles, the extra tile
// rows and the tail they make). Checked against cuBLAS once per rounded group (`reference`).
void timeRoundedGroups(nlohmann::json& k, const Kernel& kernel, const runtime::Context& ctx, DeviceBuffer& dA,
                       DeviceBuffer& dB, DeviceBuffer& dC, std::map<std::string, int64_t> dims, const RaggedOptions& o,
                       int bm, const std::function<std::vector<uint16_t>(const std::vector<int>&)>& reference) {
  std::vector<int> rows;
  int sum = 0;
  for (int r : o.rows) sum += int(rows.emplace_back((r + bm / 2) / bm * bm));
  const int total = int(dims.at("M"));
  for (size_t g = 0; sum != total && g < rows.size(); ++g) {
    const int step = sum < total ? std::min(bm, total - sum) : -std::min({bm, sum - total, rows[g]});
    rows[g] += step;
    sum += step;
  }
  std::vector<int32_t> ends;
  for (int r : rows) ends.push_back((ends.empty() ? 0 : ends.back()) + r);
  DeviceBuffer dEnds(ends.size() * 4);
  check(cudaMemcpy(dEnds.ptr, ends.data(), dEnds.bytes, cudaMemcpyHostToDevice), "copy bounds");
  const BoundsRun run = timeWithBounds(kernel, ctx, dA, dB, dEnds, dC, reference(rows), dims, o);
  const double groupsMs = k.value("ms", 0.0), vs = run.ms > 0 && groupsMs > 0 ? run.ms / groupsMs : 0.0;
  k["rounded_rows"] = rows;
  k["rounded_groups_ms"] = run.ms;
  k["rounded_groups_correct"] = run.checked.ok;
  k["vs_rounded_groups"] = vs;
  std::printf("    the same kernel on the groups rounded to %d rows:", bm);
  for (int r : rows) std::printf(" %d", r);
  std::printf(": %s %.4f ms (the groups run at %.2fx of it)\n", run.word(), run.ms, vs);
}

}  // namespace

nlohmann::json runRagged(const RaggedOptions& o) {
  if (o.fp8) return runRaggedFp8(o);
  using L = ops::GroupedGemmSpec::Layout;
  runtime::Driver* drv = driverOrExplain("kiln_grouped_bench");
  if (!drv) std::exit(3);
  runtime::Context ctx = runtime::Context::primary(*drv);
  const GroupLayout lay = layoutOf(o);
  const int G = lay.G, N = o.N, K = o.K, total = lay.total, Mbuf = lay.Mbuf;
  const std::vector<int>& starts = lay.starts;
  auto rowOf = [&](int m) -> std::pair<long, int> { return {m, lay.groupOf(m)}; };
  std::printf("[%s BF16: G=%d, rows", o.masked ? "masked" : "ragged", G);
  for (int r : o.rows) std::printf(" %d", r);
  std::printf(" (%d in all), N=%d, K=%d]\n", total, N, K);
  nlohmann::json row = {{"layout", o.masked ? "masked" : "ragged"}, {"fp8", false}, {"rows", o.rows}, {"N", N},
                        {"K", K}, {"total_rows", total}, {"kiln", nlohmann::json::array()}};
  const double flops = 2.0 * double(total) * N * K;
  auto tf = [&](double ms) { return ms > 0 ? flops / ms / 1e9 : 0.0; };

  // BF16 operands, B stored [G][N][K] (K-major).
  auto A = randomBf16(size_t(Mbuf) * K, 1), Bt = randomBf16(size_t(G) * N * K, 2);
  DeviceBuffer dA(A.size() * 2), dB(Bt.size() * 2), dC(size_t(Mbuf) * N * 2), dR(size_t(Mbuf) * N * 2),
      dBounds(size_t(G) * 4), dD(size_t(total) * N * 2);
  check(cudaMemcpy(dA.ptr, A.data(), dA.bytes, cudaMemcpyHostToDevice), "copy A");
  check(cudaMemcpy(dB.ptr, Bt.data(), dB.bytes, cudaMemcpyHostToDevice), "copy B");
  check(cudaMemcpy(dBounds.ptr, lay.bounds.data(), dBounds.bytes, cudaMemcpyHostToDevice), "copy bounds");

  cublasHandle_t h;
  check(cublasCreate(&h), "cublasCreate");
  const float alpha = 1.0f, beta = 0.0f;
  auto* a16 = static_cast<uint16_t*>(dA.ptr);
  auto* b16 = static_cast<uint16_t*>(dB.ptr);
  // One cublasGemmEx per group: C_gᵀ (N x m_g) = B_g (stored [N][K], op T) · A_gᵀ (K x m_g).
  auto groupsInto = [&](cudaStream_t st, const std::vector<int>& rows, const std::vector<int>& first) {
    check(cublasSetStream(h, st), "cublasSetStream");
    for (int g = 0; g < G; ++g)
      if (rows[size_t(g)] > 0)
        check(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, N, rows[size_t(g)], K, &alpha, b16 + size_t(g) * N * K,
                           CUDA_R_16BF, K, a16 + size_t(first[size_t(g)]) * K, CUDA_R_16BF, K, &beta,
                           static_cast<uint16_t*>(dR.ptr) + size_t(first[size_t(g)]) * N, CUDA_R_16BF, N,
                           CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
              "cublasGemmEx");
  };
  auto perGroup = [&](cudaStream_t st) { groupsInto(st, o.rows, starts); };
  poisonBf16(dR, nullptr);
  perGroup(nullptr);
  check(cudaDeviceSynchronize(), "cuBLAS per group");
  std::vector<uint16_t> ref(size_t(Mbuf) * N);
  check(cudaMemcpy(ref.data(), dR.ptr, dR.bytes, cudaMemcpyDeviceToHost), "copy reference");
  double refErr = sampleError(A, Bt, ref, Mbuf, N, K, rowOf);
  std::printf("  cuBLAS, one call per group: sampled against fp64, err %.1e%s\n", refErr,
              refErr <= 2e-2 ? "" : " -- BAD: no figures are trusted");
  row["reference_sample_err"] = refErr;

  // cuBLAS's grouped-batched GEMM: one group per expert, pointer arrays in device memory.
  std::vector<cublasOperation_t> ta(size_t(G), CUBLAS_OP_T), tb(size_t(G), CUBLAS_OP_N);
  std::vector<int> ms(size_t(G), N), ns(o.rows), ks(size_t(G), K), lda(size_t(G), K), ldb(size_t(G), K), ldc(size_t(G), N),
      sizes(size_t(G), 1);
  std::vector<float> alphas(size_t(G), 1.0f), betas(size_t(G), 0.0f);
  std::vector<const void*> pa(static_cast<size_t>(G)), pb(static_cast<size_t>(G));
  std::vector<void*> pc(static_cast<size_t>(G));
  for (int g = 0; g < G; ++g) {
    pa[size_t(g)] = b16 + size_t(g) * N * K;
    pb[size_t(g)] = a16 + size_t(starts[size_t(g)]) * K;
    pc[size_t(g)] = static_cast<uint16_t*>(dC.ptr) + size_t(starts[size_t(g)]) * N;
  }
  DeviceBuffer dPa(size_t(G) * 8), dPb(size_t(G) * 8), dPc(size_t(G) * 8);
  check(cudaMemcpy(dPa.ptr, pa.data(), dPa.bytes, cudaMemcpyHostToDevice), "copy pointers");
  check(cudaMemcpy(dPb.ptr, pb.data(), dPb.bytes, cudaMemcpyHostToDevice), "copy pointers");
  check(cudaMemcpy(dPc.ptr, pc.data(), dPc.bytes, cudaMemcpyHostToDevice), "copy pointers");
  auto grouped = [&](cudaStream_t st) {
    check(cublasSetStream(h, st), "cublasSetStream");
    check(cublasGemmGroupedBatchedEx(h, ta.data(), tb.data(), ms.data(), ns.data(), ks.data(), alphas.data(),
                                     static_cast<const void* const*>(dPa.ptr), CUDA_R_16BF, lda.data(),
                                     static_cast<const void* const*>(dPb.ptr), CUDA_R_16BF, ldb.data(), betas.data(),
                                     static_cast<void* const*>(dPc.ptr), CUDA_R_16BF, ldc.data(), G, sizes.data(),
                                     CUBLAS_COMPUTE_32F),
          "cublasGemmGroupedBatchedEx");
  };
  std::optional<std::string> groupedStatus = guardedRow([&] {
    CheckedRun c = checkBf16Output(grouped, dC, ref);
    if (!c.ok) throw std::runtime_error("wrong output, rel err " + std::to_string(c.cmp.relFrobenius));
  });
  // The same total work as one dense GEMM: [total, K] x [K, N] (the first expert's B).
  auto dense = [&](cudaStream_t st) {
    check(cublasSetStream(h, st), "cublasSetStream");
    check(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, N, total, K, &alpha, b16, CUDA_R_16BF, K, a16, CUDA_R_16BF, K, &beta,
                       dD.ptr, CUDA_R_16BF, N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
          "cublasGemmEx (dense)");
  };
  std::vector<std::function<void(cudaStream_t)>> baselines = {perGroup, dense};
  if (!groupedStatus) baselines.push_back(grouped);
  std::vector<double> baseMs = alternatingMediansMs(baselines, o.warmup, o.reps, nullptr);
  row["cublas_per_group_ms"] = baseMs[0];
  row["cublas_dense_same_work_ms"] = baseMs[1];
  row["cublas_grouped_batched_ms"] = groupedStatus ? nlohmann::json(nullptr) : nlohmann::json(baseMs[2]);
  row["cublas_grouped_batched_status"] = groupedStatus.value_or("ok");
  std::printf("  cuBLAS one call per group %.4f ms %.0f TFLOP/s; dense GEMM of the same work %.4f ms %.0f TFLOP/s; "
              "grouped-batched %s\n",
              baseMs[0], tf(baseMs[0]), baseMs[1], tf(baseMs[1]),
              groupedStatus ? groupedStatus->c_str()
                            : (std::to_string(baseMs[2]) + " ms, " + std::to_string(int(tf(baseMs[2]))) + " TFLOP/s").c_str());
  // Kiln's ragged program. Arguments: A, B, [scale_a, scale_b,] offsets or counts, C.
  auto program = ops::groupedGemmProgram({o.masked ? L::Masked : L::Offsets, ir::ScalarType::BF16, ir::ScalarType::BF16},
                                         o.masked ? "masked_grouped_gemm" : "ragged_grouped_gemm");
  std::map<std::string, int64_t> dims{{"G", G}, {"M", o.masked ? o.maxRows : total}, {"N", N}, {"K", K}};
  // cuBLAS's dense GEMM of the same work, the check of the pick run on one group (below).
  std::vector<uint16_t> denseRef(size_t(total) * N);
  check(cudaMemcpy(denseRef.data(), dD.ptr, denseRef.size() * 2, cudaMemcpyDeviceToHost), "copy dense output");
  KilnRowSpec spec;
  spec.program = program.get();
  spec.ptrs = {uint64_t(dA.ptr), uint64_t(dB.ptr), uint64_t(dBounds.ptr), uint64_t(dC.ptr)};
  spec.dims = dims;
  spec.flops = flops;
  spec.check = [&](const Launch& run, nlohmann::json& k) {
    const CheckedRun checked = checkBf16Output(run, dC, ref);
    k["rel_err"] = checked.cmp.relFrobenius;
    return checked.ok;
  };
  spec.time = [&](const Launch& run) { return medianMs(run, o.warmup, o.reps, nullptr); };
  spec.describe = [&](nlohmann::json& k) {
    const double ms = k["ms"];
    k["vs_cublas_grouped"] = !groupedStatus && ms > 0 ? baseMs[2] / ms : 0.0;
    k["vs_dense_same_work"] = ms > 0 ? baseMs[1] / ms : 0.0;
    return fmt::format("({:.2f}x the dense GEMM of the same work)", double(k["vs_dense_same_work"]));
  };
  const std::vector<std::string> lines = raggedConfigs(o, *program->body().front(), dims);
  for (const std::string& line : lines) {
    KilnRow k = kilnRow(ctx, line, spec);
    if (&line == &lines.front() && !o.masked && k.ms > 0) {
      timeOneGroup(k.json, *k.kernel, ctx, dA, dB, dC, denseRef, dims, o);
      // cuBLAS once per rounded group into dR (poisoned first: rows past the last group stay so).
      auto rounded = [&](const std::vector<int>& rows) {
        std::vector<int> first(rows.size(), 0);
        for (size_t g = 1; g < rows.size(); ++g) first[g] = first[g - 1] + rows[g - 1];
        poisonBf16(dR, nullptr);
        groupsInto(nullptr, rows, first);
        check(cudaDeviceSynchronize(), "cuBLAS per rounded group");
        std::vector<uint16_t> out(size_t(Mbuf) * N);
        check(cudaMemcpy(out.data(), dR.ptr, dR.bytes, cudaMemcpyDeviceToHost), "copy reference");
        return out;
      };
      timeRoundedGroups(k.json, *k.kernel, ctx, dA, dB, dC, dims, o, Config::parse(line).bm, rounded);
    }
    row["kiln"].push_back(k.json);
  }
  cublasDestroy(h);
  return row;
}

}  // namespace kiln::bench
