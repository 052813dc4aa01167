#include "bench/bench_support.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <random>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "kiln/float_formats.h"
#include "kiln/runtime/driver.h"

namespace kiln::bench {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}
void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(std::string(what) + ": cuBLAS status " + std::to_string(s));
}

DeviceBuffer::DeviceBuffer(size_t n) : bytes(n) { check(cudaMalloc(&ptr, n), "cudaMalloc"); }
DeviceBuffer::~DeviceBuffer() { cudaFree(ptr); }

float bf16ToFloat(uint16_t b) { return bf16BitsToFloat(b); }

float float16ToFloat(uint16_t bits, Float16 f) {
  return f == Float16::BF16 ? bf16BitsToFloat(bits) : f16BitsToFloat(bits);
}

namespace {
uint16_t roundToFloat16(float x, Float16 f) { return f == Float16::BF16 ? floatToBf16Bits(x) : floatToF16Bits(x); }

// Draws n values from N(0, 1) through `round` into v: one std::mt19937_64(seed) in order below
// kParallel elements (the values the GPU tests were written against); from kParallel on, chunks of
// kChunk elements each from its own generator seeded by (seed, chunk), on every core, so that a
// 12960 x 12888 operand takes a fraction of a second instead of ~15 s, and its values do not depend
// on the thread count.
template <typename T, typename Round>
void drawNormal(std::vector<T>& v, uint64_t seed, Round round) {
  constexpr size_t kParallel = size_t(1) << 22, kChunk = size_t(1) << 20;
  auto fill = [&](size_t begin, size_t end, uint64_t s) {
    std::mt19937_64 rng(s);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    for (size_t i = begin; i < end; ++i) v[i] = round(dist(rng));
  };
  if (v.size() < kParallel) return fill(0, v.size(), seed);
  const size_t chunks = (v.size() + kChunk - 1) / kChunk;
  std::atomic<size_t> next{0};
  std::vector<std::thread> pool(std::max(1u, std::thread::hardware_concurrency()));
  for (auto& t : pool)
    t = std::thread([&] {
      for (size_t c; (c = next++) < chunks;)
        fill(c * kChunk, std::min(v.size(), (c + 1) * kChunk), seed * 0x9e3779b97f4a7c15ull + c + 1);
    });
  for (auto& t : pool) t.join();
}
}  // namespace

std::vector<uint16_t> randomFloat16(size_t n, uint64_t seed, Float16 f) {
  std::vector<uint16_t> v(n);
  drawNormal(v, seed, [f](float x) { return roundToFloat16(x, f); });
  return v;
}

std::vector<uint8_t> randomE4m3(size_t n, uint64_t seed) {
  std::vector<uint8_t> v(n);
  drawNormal(v, seed, [](float x) { return floatToFp8Bits(x, Fp8Format::E4M3); });
  return v;
}

std::vector<uint16_t> patternedFloat16(size_t rows, size_t cols, int salt, Float16 f) {
  // Values in {-4..4} / 4: exact in BF16 and FP16, and their products and sums stay exact in f32
  // for the K used by tests, so any misplaced element changes the result.
  std::vector<uint16_t> v(rows * cols);
  for (size_t r = 0; r < rows; ++r)
    for (size_t c = 0; c < cols; ++c)
      v[r * cols + c] = roundToFloat16(static_cast<float>(static_cast<int>((r * 7 + c * 13 + salt) % 9) - 4) / 4.0f, f);
  return v;
}

void poisonBf16(DeviceBuffer& buf, cudaStream_t s) {
  check(cudaMemsetAsync(buf.ptr, 0x7f, buf.bytes, s), "poison");  // 0x7f7f: a NaN in BF16
}

namespace {

// One timed launch: flush L2 (write a buffer larger than it), then CUDA events around `launch`.
class FlushedTimer {
 public:
  FlushedTimer() {
    check(cudaEventCreate(&start_), "cudaEventCreate");
    check(cudaEventCreate(&stop_), "cudaEventCreate");
  }
  ~FlushedTimer() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  FlushedTimer(const FlushedTimer&) = delete;
  FlushedTimer& operator=(const FlushedTimer&) = delete;
  double timeMs(const std::function<void(cudaStream_t)>& launch, int rep, cudaStream_t s) {
    static DeviceBuffer flush(256u << 20);  // larger than the H200's 60 MB L2
    check(cudaMemsetAsync(flush.ptr, rep & 0xff, flush.bytes, s), "L2 flush");
    check(cudaEventRecord(start_, s), "cudaEventRecord");
    launch(s);
    check(cudaEventRecord(stop_, s), "cudaEventRecord");
    check(cudaEventSynchronize(stop_), "cudaEventSynchronize");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
    return ms;
  }

 private:
  cudaEvent_t start_, stop_;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

double medianMs(const std::function<void(cudaStream_t)>& launch, int warmup, int reps, cudaStream_t s) {
  FlushedTimer timer;
  for (int i = 0; i < warmup; ++i) launch(s);
  std::vector<double> times;
  for (int i = 0; i < reps; ++i) times.push_back(timer.timeMs(launch, i, s));
  check(cudaGetLastError(), "kernel launch");
  return median(times);
}

std::vector<double> alternatingMediansMs(const std::vector<std::function<void(cudaStream_t)>>& launches, int warmup,
                                         int reps, cudaStream_t s) {
  FlushedTimer timer;
  for (int i = 0; i < warmup; ++i)
    for (const auto& l : launches) l(s);
  std::vector<std::vector<double>> t(launches.size());
  for (int i = 0; i < reps; ++i)
    for (size_t j = 0; j < launches.size(); ++j) {
      size_t k = (j + size_t(i)) % launches.size();  // rotated: each launch takes every place in turn
      t[k].push_back(timer.timeMs(launches[k], i, s));
    }
  check(cudaGetLastError(), "kernel launch");
  std::vector<double> medians;
  for (auto& v : t) medians.push_back(median(v));
  return medians;
}

std::pair<double, double> alternatingMedianMs(const std::function<void(cudaStream_t)>& a,
                                              const std::function<void(cudaStream_t)>& b, int warmup, int reps,
                                              cudaStream_t s) {
  std::vector<double> m = alternatingMediansMs({a, b}, warmup, reps, s);  // two rotated: swapped each repetition
  return {m[0], m[1]};
}

void cublasGemm16(cublasHandle_t h, int M, int N, int K, const void* A, const void* B, void* C, bool bKMajor,
                  cudaStream_t s, Float16 f) {
  // cuBLAS is column-major: row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ, i.e. gemm(N, M, K) with
  // B first. A row-major [K, N] B is a column-major N×K... (ld N, no transpose); a K-major B is
  // column-major K×N, used transposed.
  const float alpha = 1.0f, beta = 0.0f;
  check(cublasSetStream(h, s), "cublasSetStream");
  cudaDataType t = f == Float16::BF16 ? CUDA_R_16BF : CUDA_R_16F;
  check(cublasGemmEx(h, bKMajor ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, B, t, bKMajor ? K : N, A,
                     t, K, &beta, C, t, N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
        "cublasGemmEx");
}

void cublasGemmLayout(cublasHandle_t h, int M, int N, int K, const void* A, const void* B, void* C,
                      const GemmLayout& l, cudaStream_t s, Float16 f) {
  // Column-major Cᵀ (N x M, ld ldc) = Bᵀ · Aᵀ: a row-major B is column-major N x K (no transpose), a
  // K-major B column-major K x N (transposed); a row-major A is column-major K x M (no transpose), a
  // column-major A is M x K (transposed).
  const float alpha = 1.0f, beta = 0.0f;
  check(cublasSetStream(h, s), "cublasSetStream");
  cudaDataType t = f == Float16::BF16 ? CUDA_R_16BF : CUDA_R_16F;
  const int64_t lda = l.lda ? l.lda : (l.aColMajor ? M : K), ldb = l.ldb ? l.ldb : (l.bKMajor ? K : N);
  const int64_t ldc = l.ldc ? l.ldc : N;
  check(cublasGemmEx(h, l.bKMajor ? CUBLAS_OP_T : CUBLAS_OP_N, l.aColMajor ? CUBLAS_OP_T : CUBLAS_OP_N, N, M, K, &alpha,
                     B, t, int(ldb), A, t, int(lda), &beta, C, t, int(ldc), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
        "cublasGemmEx");
}

CheckedRun checkBf16Output(const std::function<void(cudaStream_t)>& launch, DeviceBuffer& out,
                           const std::vector<uint16_t>& ref) {
  poisonBf16(out, nullptr);
  launch(nullptr);
  check(cudaDeviceSynchronize(), "checked run");
  std::vector<uint16_t> got(ref.size());
  check(cudaMemcpy(got.data(), out.ptr, got.size() * 2, cudaMemcpyDeviceToHost), "copy output");
  CheckedRun r;
  r.cmp = compareBf16(got, ref);
  r.ok = r.cmp.nonFinite == 0 && r.cmp.relFrobenius < 1e-2;
  return r;
}

Comparison compareFloat16(const std::vector<uint16_t>& x, const std::vector<uint16_t>& ref, Float16 f) {
  Comparison c;
  double num = 0, den = 0;
  for (size_t i = 0; i < x.size() && i < ref.size(); ++i) {
    double a = float16ToFloat(x[i], f), b = float16ToFloat(ref[i], f);
    if (!std::isfinite(a) && std::isfinite(b)) {
      ++c.nonFinite;
      continue;
    }
    num += (a - b) * (a - b);
    den += b * b;
    c.maxAbs = std::max(c.maxAbs, std::abs(a - b));
  }
  c.relFrobenius = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  return c;
}

runtime::Driver* driverOrExplain(const char* program) {
  std::string why;
  runtime::Driver* drv = runtime::Driver::get(&why);
  if (!drv) std::fprintf(stderr, "%s: needs a GPU: %s\n", program, why.c_str());
  return drv;
}

std::string gpuDescription() {
  int dev = 0, driver = 0;
  check(cudaGetDevice(&dev), "cudaGetDevice");
  cudaDeviceProp p{};
  check(cudaGetDeviceProperties(&p, dev), "cudaGetDeviceProperties");
  cudaDriverGetVersion(&driver);
  int clockKHz = 0, memClockKHz = 0;
  cudaDeviceGetAttribute(&clockKHz, cudaDevAttrClockRate, dev);
  cudaDeviceGetAttribute(&memClockKHz, cudaDevAttrMemoryClockRate, dev);
  return std::string(p.name) + ", " + std::to_string(p.multiProcessorCount) + " SMs, sm_" +
         std::to_string(p.major) + std::to_string(p.minor) + ", SM clock " + std::to_string(clockKHz / 1000) +
         " MHz, memory clock " + std::to_string(memClockKHz / 1000) + " MHz, L2 " +
         std::to_string(p.l2CacheSize >> 20) + " MB, driver " + std::to_string(driver / 1000) + "." +
         std::to_string((driver % 1000) / 10);
}

std::vector<Shape> parseShapes(const std::string& s) {
  std::vector<Shape> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ';')) {
    Shape sh{};
    if (std::sscanf(item.c_str(), "%dx%dx%d", &sh.M, &sh.N, &sh.K) != 3)
      throw std::runtime_error("shape '" + item + "' is not MxNxK");
    out.push_back(sh);
  }
  return out;
}

}  // namespace kiln::bench
