#pragma once
// Kiln's example programs, each written with the C++ DSL in its own file here.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kiln/ir/operation.h"

namespace kiln::examples {

struct Example {
  std::string name;
  std::string summary;
  std::function<std::unique_ptr<ir::Module>()> build;
  bool gemm = true;  // a matrix product (GEMM strategies); false: a memory-bound program (rowwise)
};

const std::vector<Example>& all();
const Example* find(const std::string& name);

std::unique_ptr<ir::Module> gemmBf16();
std::unique_ptr<ir::Module> gemmBiasGelu();
std::unique_ptr<ir::Module> gemmBiasSiluResidual();
std::unique_ptr<ir::Module> batchedGemm();
std::unique_ptr<ir::Module> gemmKMajorB();
std::unique_ptr<ir::Module> gemmF16(bool kMajorB = false);
std::unique_ptr<ir::Module> fp8RowwiseGemm();
// Groups of multiples of `align` rows (tile.group_index {align}).
std::unique_ptr<ir::Module> groupedGemm(int64_t align = 64);
// Memory-bound programs (the rowwise strategy).
std::unique_ptr<ir::Module> softmax();
std::unique_ptr<ir::Module> logSoftmax();
std::unique_ptr<ir::Module> rmsNorm();
std::unique_ptr<ir::Module> layerNorm();
std::unique_ptr<ir::Module> addRmsNorm();
std::unique_ptr<ir::Module> siluAndMul();
std::unique_ptr<ir::Module> crossEntropy();
std::unique_ptr<ir::Module> fp8Quant();

}  // namespace kiln::examples
