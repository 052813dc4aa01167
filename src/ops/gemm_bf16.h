#pragma once
// The gemm_bf16 family: C[M, N] = A[M, K] · B[K, N] in BF16 with f32 accumulation and a BF16
// output, A and B each row- or column-major, dense or strided, C row-major (DESIGN.md, "Families,
// variants, tuning"; docs/layouts.md).
//
// Each variant is a schedule of the sm80_multistage strategy (block tile bm x bn, K step bk,
// pipeline depth, warp grid) or, eligible on sm_90a only, of the sm90_ws_persistent strategy (the
// "bf16_gemm_sm90_*" variants; rules and heuristic in gemm_bf16_sm90.h). What a variant can run
// (eligibility) is kept apart from how good it is expected to be (preference):
//  * eligible(): element types (bf16 in, bf16 out), C row-major, and the variant's shared memory
//    within the target's per-block limit. An sm80 variant runs any layout and any alignment: its
//    config is adapted to the problem (configFor: align_a / align_b / align_c lowered to what the
//    rows allow, so an odd K or N gets narrower copies or element loads and element stores), except
//    that a variant too large for the element loads' registers is not eligible when they are
//    needed. The sm90 variants need A's and B's rows 16-byte aligned and no stride 0; an output
//    whose rows are not 16-byte aligned (an odd N) gets the direct epilogue with align_c lowered;
//    swap_ab variants take neither a column-major A nor such an output (gemm_bf16_sm90.h).
//    Pointer alignment is part of the launch contract the runtime checks (kiln/compile.h); the
//    problem's alignments assume 16-byte aligned base addresses.
//  * preference(): a documented heuristic, higher is better, the product of
//      useful    = M N / (ceil(M / bm) bm * ceil(N / bn) bn)     work not wasted on padding
//      waves     = tiles / (ceil(tiles / SMs) * SMs)             last-wave fill, SMs = the target's
//                                                                reference SM count
//      intensity = (bm bn / (bm + bn)) / 64                      operand reuse (128x128 = 1)
//      depth     = 1 if stages is the wanted depth, 0.95 otherwise: the deepest registered pipeline
//                  of the same tile that keeps two CTAs per SM in shared memory (else the
//                  deepest that fits one) and whose stages-1 tiles in flight ceil(K / bk) can
//                  fill (measured on the H200: docs/history/2026-11-29.md)
//      kstep     = 1 if bk = 64 exactly when K >= 1024, 0.97 otherwise
//    Ties go to the variant that comes first in the table. Selection can be forced by name; the
//    selection says which variant and whether it was forced or chosen by the heuristic.
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/compile.h"
#include "kiln/ir/diagnostics.h"
#include "kiln/ir/operation.h"
#include "kiln/target.h"
#include "schedule/config.h"

namespace kiln::ops {

struct GemmProblem {
  int64_t m = 0, n = 0, k = 0;
  ir::ScalarType a = ir::ScalarType::BF16, b = ir::ScalarType::BF16, c = ir::ScalarType::BF16;
  bool aRowMajor = true;
  bool bKMajor = false;
  bool cRowMajor = true;
  // Ragged groups (tile.for_tiles {ragged = M}; docs/grouped-gemm.md): only the variants that can
  // walk them (raggedWalkConflict: sm90, no cluster, split-K or swap_ab; stream-K for groups of
  // rows only). m is then the rows of every group together (offsets) or G x the per-group
  // capacity (counts).
  bool ragged = false;
  bool raggedK = false;  // ... the groups are along K (the weight gradient)
  int64_t groups = 0;    // ... how many (G); their sizes are on the device
  // The output's element size: the family's tables serve an f16 or f32 output by its BF16 twin
  // (c), but groups along K write [G, M, N] after short K loops, where the bytes weigh.
  int cElemBytes = 2;
  bool grouped = false;     // tile.group_index picks B's matrix per block of rows (MoE)
  bool strided = false;     // some tensor argument is strided (a leading dimension, a batch stride)
  bool bStrided = false;    // B is (its rows as aligned as its leading dimension, not its N or K)
  bool zeroStride = false;  // ... with a stride 0 (one matrix for every batch), which no tensor map has
  // The bytes each matrix's rows are aligned to (a power of two, at most 16), from its row length
  // or leading dimension (and for C its N: a pair of elements must not straddle a row's end).
  int alignA = 16, alignB = 16, alignC = 16;
};

// The largest power of two, at most 16, dividing `elems` elements of `elemBytes` bytes.
int rowAlignment(int64_t elems, int elemBytes);

struct GemmVariant {
  std::string name;  // "bf16_gemm_128x128x32_s3"
  Config config;

  // True when the variant can run the problem on the target; otherwise `why` says what differs.
  bool eligible(const GemmProblem& p, const Target& t, std::string* why = nullptr) const;
  // The heuristic in the header comment; only meaningful for eligible problems.
  double preference(const GemmProblem& p, const Target& t) const;
  // The config that runs the problem: the variant's, with an sm80 variant's alignments lowered to
  // the problem's (unchanged for 16-byte rows and paired stores).
  // `sms`: the SM count the grid should fill (Target::referenceSms; gemv sizes its blocks by it).
  Config configFor(const GemmProblem& p, int sms = 132) const;
  // The tile program this variant compiles (the plain GEMM, with B in the given layout).
  std::unique_ptr<ir::Module> program(bool bKMajor) const;
  // program() through kiln::compile with this variant's config.
  std::optional<CompileResult> compile(bool bKMajor, const Target& t, ir::DiagnosticEngine& diag) const;
};

// The registered variants, in table order (the sm80 ones, then the sm90 ones).
const std::vector<GemmVariant>& gemmBf16Variants();

// The sm90_ws_persistent part of the table and its rules (gemm_bf16_sm90.cpp).
std::vector<GemmVariant> gemmBf16Sm90Variants();
bool sm90Eligible(const GemmVariant& v, const GemmProblem& p, const Target& t, std::string* why);
double sm90Preference(const GemmVariant& v, const GemmProblem& p, const Target& t);
// The gemv part of the table (M <= 16: B streamed once on the CUDA cores) and its rules
// (gemm_bf16_gemv.cpp); gemvConfigFor sizes the block for the problem's N and the SM count.
std::vector<GemmVariant> gemmBf16GemvVariants();
bool gemvEligible(const GemmVariant& v, const GemmProblem& p, const Target& t, std::string* why);
double gemvPreference(const GemmVariant& v, const GemmProblem& p, const Target& t);
// The most rows at which the family prefers gemv on `t` (docs/gemv-strategy.md, "Which problems it
// runs"): 2 (1 with a column-major A) where the sm90 tensor-core variants run `p`, else 8.
int gemvPreferredRows(const GemmProblem& p, const Target& t);
Config gemvConfigFor(const Config& variant, const GemmProblem& p, int sms);
// `c` storing its output from registers (epilogue=direct) with the TMA-store keys at their
// defaults: what an sm90 variant becomes where a TMA store cannot address C, and the twin a
// benchmark times beside a TMA-store pick.
Config withDirectStore(Config c);
// What both parts share (gemm_bf16.cpp): the problem checks every variant makes (bf16 in and out,
// C row-major, positive dims; the reason in *why), and the tile shape terms of the preference,
// useful * waves * intensity.
bool commonEligible(const GemmProblem& p, std::string* why);
double tileShapeScore(const Config& c, const GemmProblem& p, const Target& t);
const GemmVariant* findGemmBf16Variant(std::string_view name);

struct GemmSelection {
  const GemmVariant* variant = nullptr;
  std::string source;  // "forced" or "heuristic"
  double score = 0;
  std::string str() const;  // "bf16_gemm_128x128x32_s3 (heuristic, score 0.71)"
};

// Picks a variant for the problem: the named one when `forced` is not empty (an error when it is
// unknown or not eligible), else the eligible variant of highest preference. nullopt after a
// diagnostic when nothing can run the problem.
std::optional<GemmSelection> selectGemmBf16(const GemmProblem& p, const Target& t, ir::DiagnosticEngine& diag,
                                            std::string_view forced = {});

}  // namespace kiln::ops
