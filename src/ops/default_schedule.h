#pragma once
// The schedule a program runs with when its user names none (`kiln run` without --config).
//
// A GEMM that a registered family can run on the target gets the family's pick for its dims:
// gemm_bf16 for BF16 operands and output, gemm_fp8 (promoted sums, cuBLASLt's default
// accumulation) for e4m3 operands with a BF16 output. An f16 or f32 output takes the pick for the
// same GEMM with a BF16 output (an f32 one stored from registers: the TMA-store epilogue stages
// 16-bit tiles), and f16 operands gemm_bf16's pick; fused epilogues (a bias, an activation, scales)
// take the pick of their GEMM. On sm_90a that is the sm90_ws_persistent
// kernel the family's heuristic chooses (docs/sm90-strategy.md); a grouped GEMM takes it where the
// pick's tiles fit in its groups' rows. A GEMM no variant can run gets the sm80_multistage
// default, which every target with mma.sync lowers. A program without a matrix product gets the
// rowwise family's pick for its dims (ops/rowwise.h), or the rowwise default when rowwise cannot
// lower it (its compile then names the op and what would make it lowerable).
#include <cstdint>
#include <map>
#include <string>

#include "kiln/ir/operation.h"
#include "kiln/target.h"
#include "schedule/config.h"

namespace kiln::ops {

// The default every target runs: sm80_multistage, 128x128 tiles, bk = 64 (FP8's mma.sync k32
// needs a 64-byte K row), three stages, eight warps (a 64x32 warp tile: a fused epilogue or FP8's
// promoted sums fit in the registers without spilling, on every target).
inline constexpr const char* kFallbackSchedule = "strategy=sm80_multistage bm=128 bn=128 bk=64 stages=3 warps_m=2 warps_n=4";

// kFallbackSchedule fitted to the program: a grouped GEMM ({align = A} on tile.group_index) gets
// the largest bm up to 128 that divides A, so no block straddles two groups.
Config fallbackSchedule(const ir::Operation& program);
// The rowwise default: a warp a row.
inline constexpr const char* kRowwiseFallback = "strategy=rowwise";

struct DefaultSchedule {
  Config config;
  // Where it came from: "gemm_bf16's pick for M=4096, N=4096, K=4096: bf16_gemm_sm90_... (heuristic,
  // score 0.93)", or why the fallback ("not a GEMM: ...", "no gemm_bf16 variant can run ...").
  std::string why;
  bool fromFamily = false;
  std::string family;   // "gemm_bf16", "gemm_fp8" or "rowwise" when fromFamily
  std::string variant;  // the family's variant when fromFamily
};

// `dims`: the program's dim values (M, N, K and any others), as `kiln run --dims` gives them.
// A GEMM's pick is fitted to the rows the dims give (each matrix's row length or leading
// dimension: the bytes its rows are aligned to) and to `baseAlignment` (tensor name -> the bytes
// its address is aligned to; 16 for a tensor not named).
DefaultSchedule defaultSchedule(const ir::Operation& program, const Target& t, const std::map<std::string, int64_t>& dims,
                                const std::map<std::string, int>& baseAlignment = {});

// A schedule the family would consider for the program, with the heuristic's score.
struct RankedSchedule {
  Config config;
  std::string family;   // "gemm_bf16", "gemm_fp8", "rowwise", or "" for the sm80 default
  std::string variant;  // the variant's name ("sm80 default" for the default)
  double score = 0;     // the family's preference (the default scores 0)
};
// Every variant of the program's family that can run it at `dims` on `t`, best first by the
// family's heuristic (ties in table order), each adapted to the program's output as
// defaultSchedule adapts its pick; a GEMM also gets the sm80 default last. defaultSchedule's pick,
// when it comes from a family, is the first. Empty, with `why`, when no family runs the program.
std::vector<RankedSchedule> rankedSchedules(const ir::Operation& program, const Target& t,
                                            const std::map<std::string, int64_t>& dims, std::string* why = nullptr);

}  // namespace kiln::ops
