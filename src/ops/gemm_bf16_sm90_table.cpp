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
  if (!p.aRowMajor) return no("A is column-major; the sm90 variants read A row-major (K contiguous)");
  if (p.strided) return no("a tensor is strided; the sm90 variants address dense tensors");
  if (p.k % 8 != 0) return no(fmt::format("K = {} is not a multiple of 8 (16-byte TMA strides)", p.k));
  if (p.n % 8 != 0) return no(fmt::format("N = {} is not a multiple of 8 (16-byte TMA strides)", p.n));
  int64_t smem = sm90Shape(v.config, 2).smemBytes;
  if (smem > t.maxSmemPerBlock)
    return no(fmt::format("needs {} bytes of shared memory; {} allows {}", smem, t.name, t.maxSmemPerBlock));
  return true;
}

}  // namespace kiln::ops
