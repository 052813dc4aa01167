// kiln_layouts_bench: the GEMM layouts, leading dimensions and shapes of issue 40 (docs/layouts.md)
// against cuBLAS called in the same layout, in one run, on the same buffers (shared/BENCH.md):
// BF16 operands, A and B each row- or column-major (--layout NN, NT, TN, TT: BLAS's names, "T" for
// a transposed, i.e. column-major A or K-major B), leading dimensions past the rows (--ld PAD: each
// operand's leading dimension PAD elements longer than its row), and three shape sets (--set):
// large (BENCH.md's large shapes: every layout against the NN kernel), odd (N or K not multiples of
// 8: vocabulary projections, ragged sizes) and gemv (M = 1 to 16, against the read ceiling too).
// Each case runs the schedule kiln::select picks for its program and dims (the family's automatic
// choice), checked against cuBLAS before it is timed, in alternation with cuBLAS, L2 flushed, median.
// Prints a row per case, then tables and geometric means; writes JSON (--json) and the tables as
// markdown (--summary).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <tuple>

#include "bench/bench_rows.h"
#include "bench/bench_support.h"
#include "bench/read_ceiling.h"
#include "kiln/config.h"
#include "kiln/kernel.h"
#include "kiln/program_builder.h"
#include "kiln/runtime/driver.h"
#include "kiln/select.h"
#include "kiln/target.h"
#include "ops/default_schedule.h"

using namespace kiln;

namespace {
using bench::Shape;

std::string num3(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3f", x);
  return b;
}

const std::vector<Shape> kLarge = {{4096, 4096, 4096}, {8192, 8192, 8192}, {4096, 14336, 4096}, {8192, 1024, 4096}};
// Vocabulary projections (hidden 4096 or 2048 to 50257 or 32001 tokens) and ragged sizes.
const std::vector<Shape> kOdd = {{4096, 50257, 4096}, {4096, 32001, 4096}, {2048, 50257, 2048}, {512, 32001, 4096},
                                 {3001, 2999, 4001},  {1000, 1001, 1003},  {8192, 4095, 1031}, {4096, 4096, 4100}};
// M = 1, 2, 4, 8 and 16 at Llama-like projections (N x K: 4096 x 4096, 14336 x 4096, 4096 x 14336,
// 8192 x 8192, 28672 x 8192) and a vocabulary one. On sm_90a the family picks the gemv strategy up
// to M = 2 and the sm90 tensor cores above (gemvPreferredRows in src/ops/gemm_bf16_gemv.cpp; a
// dense column-major A keeps gemv below M = 8, its rows too short for TMA): the M = 2 and 4 rows,
// and gemv forced where the pick is not gemv (Runner::forcedGemv), measure that threshold.
const std::vector<Shape> kGemv = {{1, 4096, 4096},  {1, 14336, 4096}, {1, 4096, 14336}, {1, 8192, 8192},
                                  {1, 28672, 8192}, {1, 50257, 4096}, {2, 4096, 4096},  {2, 14336, 4096},
                                  {4, 4096, 4096},  {4, 14336, 4096}, {8, 4096, 4096},  {8, 14336, 4096},
                                  {16, 4096, 4096}, {16, 8192, 8192}};

struct Layout {
  std::string name;  // NN, NT, TN, TT
  bool aCol, bKMajor;
};
const std::vector<Layout> kLayouts = {{"NN", false, false}, {"NT", false, true}, {"TN", true, false}, {"TT", true, true}};

// C[M, N] (dense, row-major) = A B with A and B in layout l, strided by the dims lda and ldb when pad > 0.
std::unique_ptr<ir::Module> program(const Layout& l, int pad) {
  ProgramBuilder p("gemm_" + l.name);
  auto [M, N, K] = p.dims("M", "N", "K");
  auto [lda, ldb] = p.dims("lda", "ldb");
  Tensor A = pad ? p.input("A", bf16, {M, K}, l.aCol ? strides(1, lda) : strides(lda, 1))
                 : p.input("A", bf16, {M, K}, l.aCol ? std::vector<int64_t>{0, 1} : std::vector<int64_t>{});
  Tensor B = pad ? p.input("B", bf16, {K, N}, l.bKMajor ? strides(1, ldb) : strides(ldb, 1))
                 : p.input("B", bf16, {K, N}, l.bKMajor ? std::vector<int64_t>{0, 1} : std::vector<int64_t>{});
  Tensor C = p.output("C", bf16, {M, N});
  p.tile({M, N}, [&](Coord m, Coord n) {
    Tile acc = p.zeros(f32, {m, n});
    p.reduce(K, [&](Coord k) { acc = dot(A(m, k), B(k, n), acc); });
    C(m, n) = cast(bf16, acc);
  });
  return p.finish();
}

struct Options {
  int reps = 20, warmup = 3;
  std::vector<Layout> layouts;
  std::vector<int> pads;
};

// One measured case: a row of the JSON and of the tables.
struct Row {
  std::string set, layout;
  Shape s;
  int pad = 0;
  std::string config, why, status;
  bool ok = false;
  double ms = 0, cublasMs = 0, relErr = 0, readMs = 0;
  // The gemv set at 1 < M <= 8 where the pick is not gemv: gemv's best-ranked config, forced, timed
  // against cuBLAS the same way (0: not run). Measures gemvPreferredRows' threshold.
  double gemvMs = 0, gemvCublasMs = 0;
  std::string gemvConfig;
  double vs() const { return ok ? cublasMs / ms : 0.0; }
  double tflops() const { return ok ? 2.0 * s.M * s.N * s.K / ms / 1e9 : 0.0; }
  nlohmann::json json() const {
    return {{"set", set},          {"layout", layout}, {"M", s.M},         {"N", s.N},        {"K", s.K},
            {"ld_pad", pad},       {"config", config}, {"why", why},       {"status", status}, {"correct", ok},
            {"ms", ms},            {"cublas_ms", cublasMs}, {"gemv_ms", gemvMs}, {"gemv_cublas_ms", gemvCublasMs}, {"gemv_config", gemvConfig}, {"vs_cublas", vs()}, {"tflops", tflops()},
            {"rel_err", relErr},   {"read_ms", readMs}};
  }
};

class Runner {
 public:
  Runner(const runtime::Context& ctx, const Options& o) : ctx_(ctx), o_(o), ceiling_(ctx) {
    bench::check(cublasCreate(&handle_), "cublasCreate");
  }
  ~Runner() { cublasDestroy(handle_); }

  Row measure(const std::string& set, const Layout& l, const Shape& s, int pad) {
    Row row{set, l.name, s, pad};
    const int64_t lda = (l.aCol ? s.M : s.K) + pad, ldb = (l.bKMajor ? s.K : s.N) + pad;
    const int64_t aElems = int64_t(l.aCol ? s.K : s.M) * lda, bElems = int64_t(l.bKMajor ? s.N : s.K) * ldb;
    auto A = bench::randomBf16(size_t(aElems), 11), B = bench::randomBf16(size_t(bElems), 12);
    bench::DeviceBuffer dA(A.size() * 2), dB(B.size() * 2), dC(size_t(s.M) * s.N * 2), dR(size_t(s.M) * s.N * 2);
    bench::check(cudaMemcpy(dA.ptr, A.data(), dA.bytes, cudaMemcpyHostToDevice), "copy A");
    bench::check(cudaMemcpy(dB.ptr, B.data(), dB.bytes, cudaMemcpyHostToDevice), "copy B");
    std::map<std::string, int64_t> dims{{"M", s.M}, {"N", s.N}, {"K", s.K}, {"lda", lda}, {"ldb", ldb}};
    bench::GemmLayout gl{l.aCol, l.bKMajor, lda, ldb, 0};
    auto runCublas = [&](cudaStream_t st) {
      bench::cublasGemmLayout(handle_, s.M, s.N, s.K, dA.ptr, dB.ptr, dR.ptr, gl, st, bench::Float16::BF16);
    };
    runCublas(nullptr);
    bench::check(cudaDeviceSynchronize(), "cuBLAS");
    std::vector<uint16_t> R(size_t(s.M) * s.N);
    bench::check(cudaMemcpy(R.data(), dR.ptr, dR.bytes, cudaMemcpyDeviceToHost), "copy cuBLAS");
    if (s.M <= 16) row.readMs = ceiling_.measure(size_t(2 * (aElems + bElems)), o_.warmup, o_.reps).ms;
    const Kernel* k = kernelFor(l, pad, dims, row);
    if (!k) return row;
    const std::vector<uint64_t> ptrs = {uint64_t(dA.ptr), uint64_t(dB.ptr), uint64_t(dC.ptr)};
    auto run = [&](cudaStream_t st) { k->launch(ctx_, st, ptrs, {}, dims); };
    std::optional<std::string> status = bench::unsupportedShape(*k, ptrs, {}, dims);
    if (!status)
      status = bench::guardedRow([&] {
        bench::CheckedRun checked = bench::checkBf16Output(run, dC, R);
        row.ok = checked.ok;
        row.relErr = checked.cmp.relFrobenius;
        if (row.ok) std::tie(row.ms, row.cublasMs) = bench::alternatingMedianMs(run, runCublas, o_.warmup, o_.reps, nullptr);
      });
    row.status = status ? *status : row.ok ? "ok" : "wrong output";
    if (set == "gemv" && s.M > 1 && s.M <= 8 && row.ok && Config::parse(row.config).strategy != "gemv")
      forcedGemv(l, pad, dims, ptrs, dC, R, runCublas, row);
    return row;
  }

 private:
  // gemv's best-ranked config (the family ranks it below the tensor cores here), checked against
  // cuBLAS's output, then timed in alternation with cuBLAS as the pick was.
  template <class Cublas>
  void forcedGemv(const Layout& l, int pad, const std::map<std::string, int64_t>& dims, const std::vector<uint64_t>& ptrs,
                  bench::DeviceBuffer& dC, const std::vector<uint16_t>& R, Cublas& runCublas, Row& row) {
    const Target target = Target::byName("sm_90a").value();
    auto key = std::make_pair(l.name, pad);
    for (const ops::RankedSchedule& r : ops::rankedSchedules(*programs_[key]->body().front(), target, dims)) {
      if (r.config.strategy != "gemv") continue;
      const std::string config = r.config.str();
      auto kkey = std::make_tuple(l.name, pad, config);
      if (!kernels_.count(kkey)) {
        ir::DiagnosticEngine diag;
        auto k = Kernel::build(*programs_[key], target, config, diag);
        if (!k) return;
        kernels_.emplace(kkey, std::move(*k));
      }
      const Kernel& k = kernels_.at(kkey);
      auto run = [&](cudaStream_t st) { k.launch(ctx_, st, ptrs, {}, dims); };
      bench::guardedRow([&] {
        if (bench::checkBf16Output(run, dC, R).ok) {
          row.gemvConfig = config;
          std::tie(row.gemvMs, row.gemvCublasMs) = bench::alternatingMedianMs(run, runCublas, o_.warmup, o_.reps, nullptr);
        }
      });
      return;
    }
  }

  // The family's pick for this layout, padding and shape, compiled once per (program, config).
  const Kernel* kernelFor(const Layout& l, int pad, const std::map<std::string, int64_t>& dims, Row& row) {
    auto key = std::make_pair(l.name, pad);
    if (!programs_.count(key)) programs_[key] = program(l, pad);
    const Target target = Target::byName("sm_90a").value();
    Selection pick = select(*programs_[key], target, dims);
    row.config = pick.config;
    row.why = pick.why;
    auto kkey = std::make_tuple(l.name, pad, pick.config);
    if (!kernels_.count(kkey)) {
      ir::DiagnosticEngine diag;
      auto k = Kernel::build(*programs_[key], target, pick.config, diag);
      if (!k) {
        row.status = "does not compile: " + diag.str();
        return nullptr;
      }
      kernels_.emplace(kkey, std::move(*k));
    }
    return &kernels_.at(kkey);
  }

  const runtime::Context& ctx_;
  const Options& o_;
  bench::ReadCeiling ceiling_;
  cublasHandle_t handle_{};
  std::map<std::pair<std::string, int>, std::unique_ptr<ir::Module>> programs_;
  std::map<std::tuple<std::string, int, std::string>, Kernel> kernels_;
};

double geomean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += std::log(x);
  return v.empty() ? 0.0 : std::exp(s / double(v.size()));
}

// The markdown summary: every row, then the goals as geometric means.
std::string summary(const std::vector<Row>& rows) {
  std::ostringstream out;
  char line[512];
  out << "| set | layout | ld pad | M | N | K | cuBLAS TFLOP/s | Kiln TFLOP/s | Kiln / cuBLAS | vs NN kernel | read "
         "ceiling | schedule |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n";
  std::map<std::string, std::vector<double>> vsCublas, vsNN;
  std::vector<double> gemvCeiling;
  for (const Row& r : rows) {
    double nn = 0;  // this shape's NN kernel, same set and padding: the layouts' goal is within 3% of it
    for (const Row& o : rows)
      if (o.set == r.set && o.layout == "NN" && o.pad == r.pad && o.s.M == r.s.M && o.s.N == r.s.N && o.s.K == r.s.K && o.ok)
        nn = o.ms;
    const double flops = 2.0 * r.s.M * r.s.N * r.s.K;
    std::string ceiling = r.readMs > 0 && r.ok ? num3(r.readMs / r.ms) : "";
    std::snprintf(line, sizeof line, "| %s | %s | %d | %d | %d | %d | %.1f | %.1f | %.3f | %s | %s | %s |\n",
                  r.set.c_str(), r.layout.c_str(), r.pad, r.s.M, r.s.N, r.s.K, r.cublasMs > 0 ? flops / r.cublasMs / 1e9 : 0.0,
                  r.tflops(), r.vs(), nn > 0 && r.ok ? num3(nn / r.ms).c_str() : "", ceiling.c_str(),
                  r.ok ? r.config.substr(0, 60).c_str() : r.status.substr(0, 120).c_str());
    out << line;
    if (!r.ok) continue;
    vsCublas[r.set + " " + r.layout].push_back(r.vs());
    vsCublas[r.set].push_back(r.vs());
    if (nn > 0 && r.layout != "NN") vsNN[r.set + " " + r.layout].push_back(nn / r.ms);
    if (r.readMs > 0 && r.s.M == 1) gemvCeiling.push_back(r.readMs / r.ms);
  }
  out << "\n| geomean over | Kiln / cuBLAS | cases |\n|---|---:|---:|\n";
  for (const auto& [k, v] : vsCublas) out << "| " << k << " | " << num3(geomean(v)) << " | " << v.size() << " |\n";
  out << "\n| layout against the NN kernel (NN time / its time) | geomean | cases |\n|---|---:|---:|\n";
  for (const auto& [k, v] : vsNN) out << "| " << k << " | " << num3(geomean(v)) << " | " << v.size() << " |\n";
  bool forced = false;
  for (const Row& r : rows)
    if (r.gemvMs > 0) {
      if (!forced)
        out << "\n| layout | M | N | K | pick us | gemv forced us | gemv / pick time | gemv x cuBLAS | gemv config |\n"
               "|---|---:|---:|---:|---:|---:|---:|---:|---|\n";
      forced = true;
      std::snprintf(line, sizeof line, "| %s | %d | %d | %d | %.1f | %.1f | %.3f | %.3f | %s |\n", r.layout.c_str(), r.s.M,
                    r.s.N, r.s.K, r.ms * 1e3, r.gemvMs * 1e3, r.gemvMs / r.ms, r.gemvCublasMs / r.gemvMs,
                    r.gemvConfig.substr(0, 90).c_str());
      out << line;
    }
  if (!gemvCeiling.empty())
    out << "\nM = 1: Kiln's time against the read ceiling (read time / Kiln time), geomean " << num3(geomean(gemvCeiling))
        << " over " << gemvCeiling.size() << " cases\n";
  return out.str();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Kiln GEMM layouts, leading dimensions and odd shapes against cuBLAS in the same layout"};
  Options o;
  std::string layoutArg = "all", ldArg = "0", setArg = "all", shapesArg, jsonPath = "layouts_bench.json", summaryPath;
  app.add_option("--layout", layoutArg, "NN, NT, TN, TT, or all (the default), or a comma-separated list");
  app.add_option("--ld", ldArg, "Leading-dimension paddings in elements, comma-separated (0: dense; default 0)");
  app.add_option("--set", setArg, "Shape set: large, odd, gemv or all (the default)")
      ->check(CLI::IsMember({"large", "odd", "gemv", "all"}));
  app.add_option("--shapes", shapesArg, "Shapes as MxNxK;MxNxK instead of the sets (set 'custom')");
  app.add_option("--reps", o.reps, "Timed repetitions per kernel (median reported)");
  app.add_option("--warmup", o.warmup, "Untimed runs first");
  app.add_option("--json", jsonPath, "Where to write the JSON results");
  app.add_option("--summary", summaryPath, "Where to write the markdown tables (also printed)");
  CLI11_PARSE(app, argc, argv);
  std::stringstream ls(layoutArg == "all" ? "NN,NT,TN,TT" : layoutArg), ps(ldArg);
  for (std::string name; std::getline(ls, name, ',');) {
    auto it = std::find_if(kLayouts.begin(), kLayouts.end(), [&](const Layout& l) { return l.name == name; });
    if (it == kLayouts.end())
      return std::fprintf(stderr, "kiln_layouts_bench: --layout '%s' is not NN, NT, TN, TT or all\n", name.c_str()), 2;
    o.layouts.push_back(*it);
  }
  for (std::string pad; std::getline(ps, pad, ',');) {
    char* end = nullptr;
    long v = std::strtol(pad.c_str(), &end, 10);
    if (pad.empty() || *end || v < 0 || v > 4096)
      return std::fprintf(stderr, "kiln_layouts_bench: --ld '%s' is not a padding of 0 to 4096 elements\n", pad.c_str()), 2;
    o.pads.push_back(int(v));
  }
  std::vector<std::pair<std::string, std::vector<Shape>>> sets;
  try {
    if (!shapesArg.empty()) sets.push_back({"custom", bench::parseShapes(shapesArg)});
  } catch (const std::exception& e) {
    return std::fprintf(stderr, "kiln_layouts_bench: --shapes '%s': %s\n", shapesArg.c_str(), e.what()), 2;
  }
  if (shapesArg.empty())
    for (const auto& [name, shapes] : {std::pair{"large", kLarge}, std::pair{"odd", kOdd}, std::pair{"gemv", kGemv}})
      if (setArg == "all" || setArg == name) sets.push_back({name, shapes});

  runtime::Driver* drv = bench::driverOrExplain("kiln_layouts_bench");
  if (!drv) return 3;
  runtime::Context ctx = runtime::Context::primary(*drv);
  std::printf("GPU: %s\ncommit %s\n", bench::gpuDescription().c_str(), KILN_GIT_COMMIT);
  Runner runner(ctx, o);
  std::vector<Row> rows;
  nlohmann::json results = nlohmann::json::array();
  for (const auto& [set, shapes] : sets)
    for (const Shape& s : shapes)
      for (int pad : o.pads)
        for (const Layout& l : o.layouts) {
          Row r = runner.measure(set, l, s, pad);
          std::printf("%-5s %s pad %d %5dx%5dx%5d: %s %.4f ms (cuBLAS %.4f ms) %.3fx cuBLAS%s err %.1e  %s\n",
                      set.c_str(), l.name.c_str(), pad, s.M, s.N, s.K, r.status.c_str(), r.ms, r.cublasMs, r.vs(),
                      r.readMs > 0 && r.ok ? (", " + num3(r.readMs / r.ms) + "x read ceiling").c_str() : "", r.relErr,
                      r.why.c_str());
          std::fflush(stdout);
          rows.push_back(r);
          results.push_back(r.json());
          // Written after every case, so a run cut short still leaves what it measured.
          std::ofstream(jsonPath) << nlohmann::json{{"gpu", bench::gpuDescription()}, {"commit", KILN_GIT_COMMIT},
                                                    {"results", results}}.dump(2)
                                  << "\n";
        }
  std::string table = summary(rows);
  std::printf("\n%s", table.c_str());
  if (!summaryPath.empty())
    std::ofstream(summaryPath) << "# kiln_layouts_bench on " << bench::gpuDescription() << ", commit " << KILN_GIT_COMMIT
                               << "\n\n" << table;
  return 0;
}
