#pragma once
// kiln_grouped_bench's ragged and masked layouts (docs/grouped-gemm.md): MoE groups of different
// row counts, given by offsets (torch._grouped_mm's contiguous layout) or by counts (DeepGEMM's
// masked layout), against cuBLAS's grouped-batched GEMM (cublasGemmGroupedBatchedEx, one group per
// expert), cuBLAS one call per group, and the same total work as one dense GEMM (cuBLAS and the
// gemm_bf16 family's pick); Kiln's ragged programs are ops/grouped_programs.h's. FP8 (--fp8):
// DeepSeek-V3's block scales, against the same total work as one dense cuBLASLt blockwise GEMM,
// with DeepGEMM's published H800 figures for orientation.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/ir/operation.h"

namespace kiln::bench {

struct RaggedOptions {
  bool masked = false;       // counts (the masked layout) instead of offsets
  bool fp8 = false;          // e4m3 with 1x128 x 128x128 block scales instead of bf16
  std::vector<int> rows;     // each group's rows (masked: each group's count, out of maxRows)
  int maxRows = 0;           // masked: the rows each group's A holds
  int N = 4096, K = 7168;
  std::vector<std::string> configs;  // Kiln schedules to try (empty: raggedConfigs' choice)
  int warmup = 5, reps = 30;
};

// Where each group's rows lie in A and C: back to back (offsets) or at g * maxRows (masked).
struct GroupLayout {
  int G = 0, total = 0, Mbuf = 0;  // groups, rows owned in all, rows of A and C
  std::vector<int> starts, rows;
  std::vector<int32_t> bounds;     // the offsets or counts the program takes
  int groupOf(int m) const;        // -1: a row no group owns
};
GroupLayout layoutOf(const RaggedOptions& o);

// The MoE shape: 8 experts of 512..2048 rows (uniform, multiples of 16, from `seed`, by
// splitmix64: bench/grouped_torch.py draws the same).
std::vector<int> moeRows(int groups, int lo, int hi, uint64_t seed);

// The Kiln schedules to time: o.configs when given, else the family's pick for `program` at
// `dims` (ops::defaultSchedule, what kiln.ops.grouped_mm runs) first, then the "_row" variants
// (row raster, direct epilogue: the ragged walk's first form, for comparison; with offsets only
// the 128-row ones, the 64-row ones having run at 0.3x dense there, to keep the run short).
std::vector<std::string> raggedConfigs(const RaggedOptions& o, const ir::Operation& program,
                                       const std::map<std::string, int64_t>& dims);

// Runs the layout, prints a line per kernel, and returns the JSON row (grouped_ragged_fp8.cpp
// for o.fp8).
nlohmann::json runRagged(const RaggedOptions& o);
nlohmann::json runRaggedFp8(const RaggedOptions& o);
// --layout kgrouped (grouped_kgrouped.cpp): groups along K, the weight gradient dW_g = X_gᵀ · dY_g
// with o.rows tokens per group, M = o.K and N = o.N (the ragged forward's weight gradient), BF16 in
// and f32 out, against cuBLAS per group and one dense GEMM of the same work.
nlohmann::json runKGrouped(const RaggedOptions& o);
// --layout kgrouped, FP8 (grouped_kgrouped_fp8.cpp): the blockwise weight gradient, e4m3 operands
// K-major, 1x128 scales along K for both, f32 out; each group's tokens o.rows rounded up to a
// multiple of 128 (kgroupedFp8Tokens, which bench/grouped_torch.py applies too); against cuBLASLt's
// blockwise GEMM (VEC128_32F both) once per group and once over the same total work.
std::vector<int> kgroupedFp8Tokens(const std::vector<int>& rows);
nlohmann::json runKGroupedFp8(const RaggedOptions& o);

}  // namespace kiln::bench
