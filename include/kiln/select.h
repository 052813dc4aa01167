#pragma once
// kiln::select: the schedule Kiln picks for a program at given dims, and why (DESIGN.md,
// "Families, variants, tuning").
//
//   kiln::Selection s = kiln::select(*program, kiln::Target::sm90a(), {{"M", 4096}, {"N", 4096}, {"K", 4096}});
//   auto k = kiln::Kernel::build(*program, kiln::Target::sm90a(), s.config, diag);
//
// A GEMM a registered family runs gets that family's pick for the dims: gemm_bf16 for 16-bit
// operands (bf16, or f16), gemm_fp8 for FP8 operands. The families' variants are tuned for a BF16
// output; an f16 or f32 output, and a fused epilogue (a bias, an activation, per-row or per-column
// scales), take the pick of the same GEMM with its store adapted to the output's type. A GEMM that
// no variant can run gets the portable sm80_multistage default, which every target lowers. A
// program without a matrix product (a softmax, a norm) gets the rowwise family's pick, or the
// rowwise default where rowwise cannot run it (its compile then says why); `why` says which and why. The config is a config line (kiln compile
// --config's text), canonical: it parses back to the same schedule.
#include <cstdint>
#include <map>
#include <string>

#include <optional>

#include "kiln/ir/operation.h"
#include "kiln/runtime/device.h"
#include "kiln/target.h"

namespace kiln {

struct Selection {
  std::string config;   // the schedule, as one canonical config line
  std::string why;      // "gemm_bf16's pick for M=4096, N=4096, K=4096: bf16_gemm_sm90_... (heuristic, score 0.93)"
  std::string family;   // "gemm_bf16", "gemm_fp8" or "rowwise"; empty for a default
  std::string variant;  // the family's variant; empty for a default
  // "tuned" when the local tuning cache chose it (kiln tune's winner), "pretuned" when a table
  // shipped with Kiln did; empty when the heuristic or a default did.
  std::string tuned;
};

// `program`: a module holding one verified tile.program. `dims`: the values of its dims (those not
// given count as 0, which no variant runs: the default is picked). The pick fits the rows the
// dims give (an odd K or N, a leading dimension: docs/layouts.md) and assumes every tensor's base
// address 16-byte aligned; `baseAlignment` (tensor name -> bytes, a power of two) says otherwise
// for a tensor at an offset (a slice of a larger buffer).
Selection select(const ir::Module& program, const Target& target, const std::map<std::string, int64_t>& dims,
                 const std::map<std::string, int>& baseAlignment = {});

// The same on the GPU `ctx` holds, with measurements first (docs/tuning.md): the winner `kiln tune`
// recorded for this program, device and shape bucket in the tuning cache (`tuningDir`, empty: the
// default folder), else a pretuned entry Kiln ships for this device, else select(program,
// targetOf(ctx), dims). A measured config was timed at a nearby shape of its bucket: where it cannot
// compile at these dims (a tile that must divide one), Kernel::build says so, and the heuristic's
// pick (select with a Target) is the fallback. A damaged cache entry is a warning in `warnings`.
Selection select(const ir::Module& program, const runtime::Context& ctx, const std::map<std::string, int64_t>& dims,
                 const std::string& tuningDir = "", std::string* warnings = nullptr);

// The target a context's device is (sm_90a for compute capability 9.0); nullopt when Kiln has none.
std::optional<Target> targetOf(const runtime::Context& ctx);

}  // namespace kiln
