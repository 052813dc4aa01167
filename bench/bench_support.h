#pragma once
// Shared pieces of Kiln's GPU benchmarks and GPU tests (shared/BENCH.md is the method):
// device buffers, seeded random-normal BF16 or FP16 inputs, an L2 flush between repetitions, CUDA-event
// timing with the median of many repetitions, the cuBLAS baseline, and output comparison.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace kiln::runtime {
class Driver;
}

namespace kiln::bench {

// Throws std::runtime_error naming the call when a CUDA or cuBLAS call fails.
void check(cudaError_t e, const char* what);
void check(cublasStatus_t s, const char* what);

struct DeviceBuffer {
  void* ptr = nullptr;
  size_t bytes = 0;
  explicit DeviceBuffer(size_t n);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

// The 16-bit float formats of the GEMMs' operands and outputs.
enum class Float16 { BF16, F16 };
float float16ToFloat(uint16_t bits, Float16 f);

// Host data (bit patterns) drawn from N(0, 1) with a fixed seed, never zeros; from 4M elements on,
// drawn in chunks on every core (bench_support.cpp says how), the same values on any machine.
std::vector<uint16_t> randomFloat16(size_t n, uint64_t seed, Float16 f);
inline std::vector<uint16_t> randomBf16(size_t n, uint64_t seed) { return randomFloat16(n, seed, Float16::BF16); }
// FP8 E4M3 host data (bit patterns) drawn from N(0, 1) with a fixed seed, rounded once through Kiln's
// own conversion (kiln/float_formats.h, saturating) so the device and the host reference read the
// same values; never all zeros. N(0, 1) sits far inside E4M3's range (max 448): only rounding, no
// saturation.
std::vector<uint8_t> randomE4m3(size_t n, uint64_t seed);
// A pattern where each element identifies its position: small multiples of 1/4, exact in both formats.
std::vector<uint16_t> patternedFloat16(size_t rows, size_t cols, int salt, Float16 f);
inline std::vector<uint16_t> patternedBf16(size_t rows, size_t cols, int salt) {
  return patternedFloat16(rows, cols, salt, Float16::BF16);
}

// Fills a buffer with a poison pattern (0x7f7f: NaN in BF16 and in FP16), so unwritten outputs show.
void poisonBf16(DeviceBuffer& buf, cudaStream_t s);

// Times `launch` with CUDA events: `warmup` untimed runs, then `reps` timed runs, flushing L2
// (writing a buffer larger than it) before each. Returns the median in milliseconds.
double medianMs(const std::function<void(cudaStream_t)>& launch, int warmup, int reps, cudaStream_t s);

// The same for two launches in alternation (shared/BENCH.md: the kernel and its baseline
// alternating), each timed alone after its own flush, the pair's order swapped every repetition so
// neither always runs first; the GPU's clock drifting over a run then moves both medians alike.
// Returns the medians of `a` and `b`.
std::pair<double, double> alternatingMedianMs(const std::function<void(cudaStream_t)>& a,
                                              const std::function<void(cudaStream_t)>& b, int warmup, int reps,
                                              cudaStream_t s);

// The same for any number of launches: each repetition times every launch once, after its own
// flush, in an order rotated by one every repetition. Returns the medians, in the launches' order.
std::vector<double> alternatingMediansMs(const std::vector<std::function<void(cudaStream_t)>>& launches, int warmup,
                                         int reps, cudaStream_t s);

// C[M,N] (row-major) = A[M,K] (row-major) · B[K,N] (row-major, or K-major when bKMajor), all in
// format f, f32 accumulation, through cublasGemmEx.
void cublasGemm16(cublasHandle_t h, int M, int N, int K, const void* A, const void* B, void* C, bool bKMajor,
                  cudaStream_t s, Float16 f);
// The same in any of the four layouts, with leading dimensions: A row-major [M][lda] or
// column-major (element (m, k) at m + k * lda), B row-major [K][ldb] or K-major (element (k, n) at
// k + n * ldb), C row-major [M][ldc]; a leading dimension of 0 is the dense one.
struct GemmLayout {
  bool aColMajor = false, bKMajor = false;
  int64_t lda = 0, ldb = 0, ldc = 0;
};
void cublasGemmLayout(cublasHandle_t h, int M, int N, int K, const void* A, const void* B, void* C,
                      const GemmLayout& l, cudaStream_t s, Float16 f);
inline void cublasGemmBf16(cublasHandle_t h, int M, int N, int K, const void* A, const void* B, void* C, bool bKMajor,
                           cudaStream_t s) {
  cublasGemm16(h, M, N, K, A, B, C, bKMajor, s, Float16::BF16);
}

struct Comparison {
  double relFrobenius = 0;  // ‖x − ref‖ / ‖ref‖
  double maxAbs = 0;
  size_t nonFinite = 0;      // NaN or inf in x where ref is finite: unwritten or broken output
};
Comparison compareFloat16(const std::vector<uint16_t>& x, const std::vector<uint16_t>& ref, Float16 f);
inline Comparison compareBf16(const std::vector<uint16_t>& x, const std::vector<uint16_t>& ref) {
  return compareFloat16(x, ref, Float16::BF16);
}

// The check every timed kernel passes before its time is trusted: `launch` runs once into `out`
// (poisoned first), and what it wrote is compared with `ref` (BF16). ok: finite wherever ref is,
// and a relative Frobenius error under 1e-2.
struct CheckedRun {
  Comparison cmp;
  bool ok = false;
};
CheckedRun checkBf16Output(const std::function<void(cudaStream_t)>& launch, DeviceBuffer& out,
                           const std::vector<uint16_t>& ref);

std::string gpuDescription();  // name, SM count, clocks, driver — printed once per run

// The CUDA driver, or nullptr after telling stderr that `program` needs a GPU and why there is
// none (the benchmark then exits 3).
runtime::Driver* driverOrExplain(const char* program);
float bf16ToFloat(uint16_t b);

// A GEMM problem size, and the --shapes syntax "MxNxK;MxNxK" (throws on anything else).
struct Shape {
  int M, N, K;
};
std::vector<Shape> parseShapes(const std::string& s);

}  // namespace kiln::bench
