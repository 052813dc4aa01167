#pragma once
// The gemm_fp8 family: the FP8 scaled GEMM of torch._scaled_mm's "rowwise" mode,
//   C[M, N] = bf16((A · B)[m, n] x scale_a[m] x scale_b[n])
// with A e4m3 [M][K] (K contiguous), B e4m3 stored K-major ([N][K], K contiguous: the layout FP8
// wgmma reads), scale_a f32 [M], scale_b f32 [N], C bf16 [M][N] row-major, and the products summed
// in f32: each K step's 128 products inside wgmma, added to f32 accumulators in registers (or,
// asked for, left in the tensor cores' own accumulator across K steps; docs/sm90-strategy.md, "FP8").
// The arguments are (A, B, scale_a, scale_b, C) and the dims M, N, K.
//
// Every variant is an sm90_ws_persistent schedule for sm_90a with bk = 128 (one 128-byte swizzled
// row of FP8 per K step, the bytes of BF16's bk = 64), named
// "fp8_gemm_sm90_<bm>x<bn>x128_s<stages>[_tma][_pp][_c2][_sk<S>][_streamk1][_pairs|_fastacc][_row]"
// with the suffixes of gemm_bf16_sm90.h ("_row": raster=row and the direct epilogue,
// behind their grouped-raster twins on dense problems; any variant without a cluster or split
// walks ragged groups); "_pairs": fp8_accum=promote_pairs, none: fp8_accum=promote,
// "_fastacc": fp8_accum=fast (Fp8GemmProblem::fastAccum). What each is for, and the heuristic
// that picks among them, is in gemm_fp8.cpp.
//  * eligible: A and B e4m3, the output bf16, positive dims, K % 16 == 0 (16-byte rows of A and
//    B for TMA), N % 8 == 0 (the output's rows), a target with wgmma and TMA, shared memory fits,
//    and the accumulation the problem asks for.
//  * preference: higher is better (gemm_fp8.cpp).
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/compile.h"
#include "kiln/ir/diagnostics.h"
#include "kiln/ir/operation.h"
#include "kiln/target.h"
#include "ops/fp8_programs.h"
#include "schedule/config.h"

namespace kiln::ops {

struct Fp8GemmProblem {
  int64_t m = 0, n = 0, k = 0;
  ir::ScalarType a = ir::ScalarType::F8E4M3, b = ir::ScalarType::F8E4M3, c = ir::ScalarType::BF16;
  // false: only variants that promote each K step's sums to f32 registers (fp8_accum=promote, the
  // default, as cuBLASLt's and torch._scaled_mm's); true: only the "_fastacc" ones, which leave
  // the sums in the tensor cores' own accumulator (cuBLASLt's FAST_ACCUM): faster, fewer bits kept
  // over long K.
  bool fastAccum = false;
  bool strided = false;  // some tensor argument is strided (the variants address dense tensors)
  // The scaling mode (ops/fp8_programs.h). Rowwise and tensorwise scales apply in the epilogue, on
  // any variant; blockwise ones per K step as its sums are promoted, on the variants that promote
  // (fastAccum is then ignored: the scales need each step's sums in f32).
  Fp8Scaling scaling = Fp8Scaling::Rowwise;
  // Ragged groups (as GemmProblem::ragged): only the variants that can walk them.
  bool ragged = false;
  bool raggedK = false;  // the groups are along K (the weight gradient): no stream-K
  int64_t groups = 0;    // how many (G); their sizes are on the device
};

struct Fp8GemmVariant {
  std::string name;  // "fp8_gemm_sm90_128x256x128_s4_tma"
  Config config;

  bool eligible(const Fp8GemmProblem& p, const Target& t, std::string* why = nullptr) const;
  double preference(const Fp8GemmProblem& p, const Target& t) const;
  // fp8ScaledGemmProgram() through kiln::compile with this variant's config.
  std::optional<CompileResult> compile(const Target& t, ir::DiagnosticEngine& diag) const;
};

// The family's tile program (the header comment's C); examples::fp8RowwiseGemm is this program.
// `bType`: B's FP8 format (f8e5m2 gives the mixed e4m3 x e5m2 GEMM, which the family does not run).
std::unique_ptr<ir::Module> fp8ScaledGemmProgram(const std::string& name = "fp8_rowwise_gemm",
                                                 ir::ScalarType bType = ir::ScalarType::F8E4M3);

const std::vector<Fp8GemmVariant>& gemmFp8Variants();

// Whether config `c` reads every block scale of p's mode from its K step's stage (sm90 copies
// scale_a's rows and scale_b's blocks or columns by TMA with the operands where their rings fit the
// shared memory beside p's output staging), which shortens each promoted step's chain (the
// family's preference).
bool blockScalesFromStage(const Config& c, const Fp8GemmProblem& p, const Target& t);
const Fp8GemmVariant* findGemmFp8Variant(std::string_view name);

struct Fp8GemmSelection {
  const Fp8GemmVariant* variant = nullptr;
  std::string source;  // "forced" or "heuristic"
  double score = 0;
};

// The named variant when `forced` is not empty (an error when unknown or not eligible), else the
// eligible variant of highest preference; nullopt after a diagnostic when none can run the problem.
std::optional<Fp8GemmSelection> selectGemmFp8(const Fp8GemmProblem& p, const Target& t, ir::DiagnosticEngine& diag,
                                              std::string_view forced = {});

}  // namespace kiln::ops
