// kiln_rowwise_bench: the memory-bound examples (softmax, norms, SwiGLU, cross-entropy, FP8
// quantization) on the rowwise strategy at LLM shapes, against the device-to-device copy of the
// same bytes in the same run (shared/BENCH.md): random-normal inputs (labels uniform in the
// vocabulary, eps = 1e-6), every output checked before its time is trusted -- a sample of rows,
// the first, two in the middle and the last, run again through the tile-IR interpreter, which is
// exact for a row program since each row depends only on its own inputs -- CUDA events, L2
// flushed before every repetition, median of many. Reports the bytes that must move (every input
// read once, every output written once), GB/s, and the fraction of the copy's GB/s. Writes JSON,
// which bench/rowwise_torch.py reads to put torch eager and torch.compile beside it.
#include <CLI/CLI.hpp>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "backend/resource_report.h"
#include "bench/bench_support.h"
#include "examples/examples.h"
#include "kiln/float_formats.h"
#include "kiln/interp/interpreter.h"
#include "kiln/kernel.h"
#include "kiln/runtime/driver.h"
#include "ops/default_schedule.h"
#include "ops/rowwise.h"
#include "schedule/config.h"
#include "target/target.h"

using namespace kiln;

namespace {

struct Case {
  std::string example;
  int64_t rows, cols;
};

// The LLM shapes: hidden sizes 4096 and 8192, a 14336-wide MLP, a 128K vocabulary.
const std::vector<Case> kDefaultCases = {
    {"softmax", 4096, 4096},        {"softmax", 32768, 8192},       {"softmax", 8192, 128256},
    {"log_softmax", 4096, 4096},    {"log_softmax", 32768, 8192},   {"rms_norm", 4096, 4096},
    {"rms_norm", 32768, 8192},      {"layer_norm", 4096, 4096},     {"layer_norm", 32768, 8192},
    {"add_rms_norm", 4096, 4096},   {"add_rms_norm", 32768, 8192},  {"silu_and_mul", 16384, 14336},
    {"cross_entropy", 8192, 128256}, {"cross_entropy", 4096, 32000}, {"fp8_quant", 4096, 4096},
    {"fp8_quant", 32768, 8192},
};

// "softmax:4096x4096;cross_entropy:8192x128256"
std::vector<Case> parseCases(const std::string& s) {
  std::vector<Case> r;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ';');) {
    Case c;
    size_t colon = item.find(':'), x = item.find('x', colon);
    if (colon == std::string::npos || x == std::string::npos) throw std::runtime_error("bad case '" + item + "'");
    c.example = item.substr(0, colon);
    c.rows = std::stoll(item.substr(colon + 1, x - colon - 1));
    c.cols = std::stoll(item.substr(x + 1));
    r.push_back(c);
  }
  return r;
}

struct Tensor {
  std::string name;
  bool output = false;
  ir::ScalarType dtype;
  std::vector<int64_t> shape;
  bool perRow = false;  // its first axis is the rows
  std::unique_ptr<bench::DeviceBuffer> buf;
  size_t bytes() const { return buf->bytes; }
};

int64_t elemBytes(ir::ScalarType t) { return ir::bitWidth(t) / 8; }

// A pool of N(0, 1) values in `t`'s bytes, repeated over the buffer (the pool's length is no
// multiple of an LLM row, so rows differ); i32 tensors get labels uniform in [0, cols).
void fill(Tensor& t, int64_t cols, uint64_t seed) {
  std::mt19937_64 rng(seed);
  size_t eb = size_t(elemBytes(t.dtype)), n = t.bytes() / eb;
  size_t pool = std::min<size_t>(n, (size_t(1) << 22) + 7);
  std::vector<uint8_t> bytes(pool * eb);
  std::normal_distribution<float> normal;
  std::uniform_int_distribution<int32_t> label(0, int32_t(cols - 1));
  for (size_t i = 0; i < pool; ++i) {
    float v = normal(rng);
    uint32_t bits = t.dtype == ir::ScalarType::BF16 ? floatToBf16Bits(v)
                    : t.dtype == ir::ScalarType::F16 ? floatToF16Bits(v)
                    : t.dtype == ir::ScalarType::I32 ? uint32_t(label(rng))
                                                     : std::bit_cast<uint32_t>(v);
    std::memcpy(bytes.data() + i * eb, &bits, eb);
  }
  for (size_t at = 0; at < n; at += pool)
    bench::check(cudaMemcpy(static_cast<uint8_t*>(t.buf->ptr) + at * eb, bytes.data(), std::min(pool, n - at) * eb,
                            cudaMemcpyHostToDevice),
                 "fill input");
}

// The check before timing: rows `sample` of every output against the interpreter run on those rows
// of the inputs. "" when they agree (relative Frobenius error under 1e-2, finite wherever the
// interpreter's result is), else what differs.
std::string checkSample(const ir::Operation& program, const std::vector<Tensor>& ts, const Case& c,
                        const std::map<std::string, double>& scalars, const std::vector<int64_t>& sample) {
  auto names = program.stringsAttr("dims");
  int64_t k = int64_t(sample.size());
  std::map<std::string, interp::HostTensor> host, got;
  interp::RunRequest req{{{names[0], k}, {names[1], c.cols}}, {}, scalars};
  for (const Tensor& t : ts) {
    std::vector<int64_t> shape = t.shape;
    if (t.perRow) shape[0] = k;
    interp::HostTensor h = interp::makeHostTensor(t.dtype, shape);
    size_t rowBytes = h.bytes.size() / size_t(t.perRow ? k : 1);
    for (int64_t i = 0; i < (t.perRow ? k : 1); ++i)
      bench::check(cudaMemcpy(h.bytes.data() + size_t(i) * rowBytes,
                              static_cast<uint8_t*>(t.buf->ptr) + size_t(t.perRow ? sample[size_t(i)] : 0) * rowBytes,
                              rowBytes, cudaMemcpyDeviceToHost),
                   "read sample");
    (t.output ? got : host).emplace(t.name, h);
    if (t.output) host.emplace(t.name, interp::makeHostTensor(t.dtype, shape));
  }
  for (auto& [name, h] : host) req.tensors[name] = &h;
  ir::DiagnosticEngine diag;
  if (!interp::run(program, req, diag)) return "the interpreter failed: " + diag.str();
  std::string bad;
  for (auto& [name, g] : got) {
    auto x = interp::toDoubles(g), ref = interp::toDoubles(host.at(name));
    double num = 0, den = 0;
    size_t nonFinite = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      if (!std::isfinite(ref[i])) continue;
      if (!std::isfinite(x[i])) ++nonFinite;
      else num += (x[i] - ref[i]) * (x[i] - ref[i]), den += ref[i] * ref[i];
    }
    double rel = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
    if (nonFinite || !(rel < 1e-2)) bad += name + ": rel_fro_err " + std::to_string(rel) + ", non-finite " + std::to_string(nonFinite) + "; ";
  }
  return bad;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Kiln's memory-bound kernels (rowwise) against the device copy of the same bytes"};
  std::string casesArg, jsonPath = "rowwise_bench.json";
  int reps = 50, warmup = 5;
  bool allVariants = false;
  app.add_option("--cases", casesArg, "example:RxC;... (default: the LLM shapes of issue 38)");
  app.add_option("--reps", reps, "Timed repetitions per kernel (median reported)");
  app.add_option("--warmup", warmup, "Untimed runs first");
  app.add_option("--json", jsonPath, "Where to write the JSON results");
  app.add_flag("--all-variants", allVariants, "Time every eligible rowwise variant, not only the family's pick");
  CLI11_PARSE(app, argc, argv);
  runtime::Driver* drv = bench::driverOrExplain("kiln_rowwise_bench");
  if (!drv) return 3;
  runtime::Context ctx = runtime::Context::primary(*drv);
  std::printf("GPU: %s\n", bench::gpuDescription().c_str());
  const auto& props = ctx.properties();
  Target target = Target::byName("sm_" + std::to_string(props.ccMajor) + std::to_string(props.ccMinor) +
                                 (props.ccMajor == 9 ? "a" : ""))
                      .value_or(Target::sm80());
  auto cases = casesArg.empty() ? kDefaultCases : parseCases(casesArg);
  nlohmann::json results = nlohmann::json::array();
  std::vector<std::string> table;
  double logFraction = 0;
  int nFraction = 0;
  for (const Case& c : cases) {
    const examples::Example* e = examples::find(c.example);
    if (!e || e->gemm) {
      std::fprintf(stderr, "kiln_rowwise_bench: '%s' is not a memory-bound example (kiln examples lists them)\n",
                   c.example.c_str());
      return 2;
    }
    auto module = e->build();
    const ir::Operation& program = *module->body().front();
    auto names = program.stringsAttr("dims");
    std::map<std::string, int64_t> dims = {{names[0], c.rows}, {names[1], c.cols}};
    // Buffers in declaration order; the bytes every kernel must move (inputs once, outputs once).
    std::vector<Tensor> ts;
    std::vector<uint64_t> ptrs;
    std::map<std::string, double> scalars;
    std::vector<double> scalarList;
    double bytes = 0;
    for (const auto& op : program.body().operations()) {
      if (op->is("tile.scalar")) {
        scalars[op->stringAttr("name")] = 1e-6;
        scalarList.push_back(1e-6);
      }
      if (!op->is("tile.input") && !op->is("tile.output")) continue;
      const ir::Type& ty = op->result()->type();
      Tensor t{op->stringAttr("name"), op->is("tile.output"), ty.elem(), {}, ty.shape()[0] == ir::Extent::of(names[0])};
      for (const auto& x : ty.shape()) t.shape.push_back(x.isSymbolic() ? dims.at(x.sym) : x.value);
      size_t n = size_t(interp::numElements(t.shape)) * size_t(elemBytes(t.dtype));
      t.buf = std::make_unique<bench::DeviceBuffer>(n);
      if (!t.output) fill(t, c.cols, 1 + ts.size());
      bytes += double(n);
      ptrs.push_back(uint64_t(t.buf->ptr));
      ts.push_back(std::move(t));
    }
    // The copy ceiling: a device-to-device copy moving the same bytes (half read, half written).
    size_t half = size_t(bytes / 2) & ~size_t(255);
    double copyMs;
    {
      bench::DeviceBuffer src(half), dst(half);
      bench::check(cudaMemset(src.ptr, 1, half), "copy source");
      copyMs = bench::medianMs(
          [&](cudaStream_t s) { bench::check(cudaMemcpyAsync(dst.ptr, src.ptr, half, cudaMemcpyDeviceToDevice, s), "copy"); },
          warmup, reps, nullptr);
    }
    double copyGbps = 2.0 * double(half) / copyMs / 1e6;
    ops::DefaultSchedule pick = ops::defaultSchedule(program, target, dims);
    std::vector<std::pair<std::string, Config>> configs = {{"pick", pick.config}};
    if (allVariants) {
      ir::DiagnosticEngine quiet;
      auto p = ops::rowProblemOf(program, target, dims, quiet);
      for (const auto& v : ops::rowwiseVariants())
        if (p && v.eligible(*p, target) && !(v.config == pick.config)) configs.push_back({v.name, v.config});
    }
    std::printf("[%s %lldx%lld] %.1f MB to move; copy %.4f ms (%.0f GB/s); %s\n", c.example.c_str(),
                static_cast<long long>(c.rows), static_cast<long long>(c.cols), bytes / 1e6, copyMs, copyGbps,
                pick.why.c_str());
    nlohmann::json caseJson = {{"example", c.example}, {"rows", c.rows}, {"cols", c.cols}, {"bytes", bytes},
                               {"copy_ms", copyMs}, {"copy_gbps", copyGbps}, {"pick", pick.why},
                               {"kiln", nlohmann::json::array()}};
    for (const auto& [label, config] : configs) {
      ir::DiagnosticEngine diag;
      auto k = Kernel::build(*module, target, config, diag);
      if (!k) {
        std::printf("  %-28s does not build: %s", label.c_str(), diag.str().c_str());
        continue;
      }
      auto run = [&](cudaStream_t s) { k->launch(ctx, s, ptrs, scalarList, dims); };
      for (Tensor& t : ts)
        if (t.output) bench::check(cudaMemset(t.buf->ptr, 0xff, t.bytes()), "poison");  // NaN in every float type
      run(nullptr);
      bench::check(cudaDeviceSynchronize(), "check run");
      std::string bad = checkSample(program, ts, c, scalars, {0, 1, c.rows / 2, c.rows - 1});
      double ms = bad.empty() ? bench::medianMs(run, warmup, reps, nullptr) : 0;
      double gbps = bad.empty() ? bytes / ms / 1e6 : 0;
      std::printf("  %-28s %s %.4f ms %.0f GB/s = %.3f of the copy's (%s)%s%s\n", label.c_str(), bad.empty() ? "ok " : "BAD",
                  ms, gbps, gbps / copyGbps, k->config().c_str(), k->resources().str().c_str(), bad.c_str());
      caseJson["kiln"].push_back({{"label", label}, {"config", k->config()}, {"correct", bad.empty()}, {"ms", ms},
                                  {"gbps", gbps}, {"of_copy", gbps / copyGbps}, {"registers", k->resources().registers},
                                  {"spill_bytes", k->resources().spillStoreBytes + k->resources().spillLoadBytes}});
      if (label == "pick" && bad.empty()) {
        logFraction += std::log(gbps / copyGbps);
        ++nFraction;
        char line[512];
        std::snprintf(line, sizeof line, "| %s | %lldx%lld | %.1f | %.4f | %.0f | %.0f | %.3f |", c.example.c_str(),
                      static_cast<long long>(c.rows), static_cast<long long>(c.cols), bytes / 1e6, ms, gbps, copyGbps,
                      gbps / copyGbps);
        table.push_back(line);
      }
    }
    results.push_back(caseJson);
    std::fflush(stdout);
    // Written after every case, so a run cut short still leaves what it measured.
    std::ofstream(jsonPath) << nlohmann::json{{"gpu", bench::gpuDescription()}, {"commit", KILN_GIT_COMMIT},
                                              {"results", results}}.dump(2)
                            << "\n";
  }
  std::printf("\n| example | shape | MB | Kiln ms | Kiln GB/s | copy GB/s | of copy |\n|---|---|---:|---:|---:|---:|---:|\n");
  for (const auto& l : table) std::printf("%s\n", l.c_str());
  if (nFraction) std::printf("\ngeomean fraction of the copy's GB/s: %.3f (%d cases)\n", std::exp(logFraction / nFraction), nFraction);
  return 0;
}
