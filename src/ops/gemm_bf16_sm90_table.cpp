// The sm90 variants of gemm_bf16: the registered rows (data: src/ops/data/gemm_bf16_sm90.variants,
// with why each is there) and their eligibility (contract in gemm_bf16_sm90.h; their preference is
// in gemm_bf16_sm90.cpp).
#include "ops/gemm_bf16_sm90.h"

#include <fmt/format.h>

#include "gemm_bf16_sm90_variants.h"  // generated: the data file as text
#include "ops/gemm_bf16.h"
#include "ops/variant_data.h"

namespace kiln::ops {

std::vector<GemmVariant> gemmBf16Sm90Variants() {
  std::vector<GemmVariant> t;
  for (VariantRow& row : parseVariantRows(kGemmBf16Sm90VariantsText, kGemmBf16Sm90VariantsTextFile, "sm90_ws_persistent"))
    t.push_back({std::move(row.name), std::move(row.config)});
  return t;
}

bool sm90Eligible(const GemmVariant& v, const GemmProblem& p, const Target& t, std::string* why) {
  auto no = [&](std::string reason) {
    if (why) *why = std::move(reason);
    return false;
  };
  // The problem checks of every variant (commonEligible) have passed.
  if (!t.wgmma || !t.tma) return no(t.name + " has no wgmma / TMA (the sm90 variants need sm_90a)");
  if (!p.aRowMajor && v.config.swapAB)
    return no("A is column-major; swap_ab reads A K-major (wgmma's B operand)");
  if (p.zeroStride) return no("a tensor has a stride 0 (one matrix for every batch), which no tensor map has");
  if (p.alignA < 16)
    return no(fmt::format("A's rows are aligned to {} bytes ({} = {} or its leading dimension); TMA needs 16", p.alignA,
                          p.aRowMajor ? "K" : "M", p.aRowMajor ? p.k : p.m));
  if (p.alignB < 16)
    return no(fmt::format("B's rows are aligned to {} bytes ({} = {} or its leading dimension); TMA needs 16", p.alignB,
                          p.bKMajor ? "K" : "N", p.bKMajor ? p.k : p.n));
  if (p.alignC < 16 && v.config.swapAB)
    return no(fmt::format("the output's rows are aligned to {} bytes (N = {}); swap_ab stores through TMA, which needs 16",
                          p.alignC, p.n));
  int64_t smem = sm90Shape(v.config, 2).smemBytes;
  if (smem > t.maxSmemPerBlock)
    return no(fmt::format("needs {} bytes of shared memory; {} allows {}", smem, t.name, t.maxSmemPerBlock));
  return true;
}

}  // namespace kiln::ops
