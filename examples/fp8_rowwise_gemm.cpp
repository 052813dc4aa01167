// FP8 scaled GEMM: A and B in e4m3, both K-major; C = (A·B) scaled by a per-row factor of A and a
// per-column factor of B (the "rowwise" scaling of torch._scaled_mm), BF16 out. It is the program
// of the registered gemm_fp8 family (src/ops/gemm_fp8.h), written there once.
#include "examples/examples.h"
#include "ops/gemm_fp8.h"

namespace kiln::examples {

std::unique_ptr<ir::Module> fp8RowwiseGemm() { return ops::fp8ScaledGemmProgram(); }

}  // namespace kiln::examples
