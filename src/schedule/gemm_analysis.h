#pragma once
// Recognises a GEMM-family tile program and describes it for a strategy.
//
// The shape the sm80 strategies lower (anything else gets a diagnostic that says what differs):
//
//   tile.program {dims = [...]} {
//     %A = tile.input : tensor<bf16|f16, [M, K]>          (row-major: K contiguous)
//     %B = tile.input : tensor<bf16|f16, [K, N]>          (row-major, or K-major with order = [0, 1])
//     ...other inputs/outputs/scalars used by the epilogue...
//     tile.for_tiles {dims = [M, N]} {
//     ^bb0(%m: coord<[M]>, %n: coord<[N]>):
//       %acc0 = tile.constant {value = 0.0} : tile<f32, [M, N]>
//       %acc = tile.reduce(%acc0) {dim = K} {
//       ^bb0(%k, %c):  %a = tile.load(%A, %m, %k)  %b = tile.load(%B, %k, %n)
//                      %d = tile.dot(%a, %b, %c)  tile.yield(%d) }
//       ...elementwise epilogue on %acc...
//       tile.store(%C, %m, %n, %v)                         (C row-major [M, N])
//       tile.yield()
//     }
//   }
#include <optional>
#include <string>
#include <vector>

#include "kiln/ir/diagnostics.h"
#include "kiln/ir/operation.h"

namespace kiln {

struct GemmProgram {
  const ir::Operation* program = nullptr;
  const ir::Operation* forTiles = nullptr;
  const ir::Operation* reduce = nullptr;
  const ir::Operation* loadA = nullptr;
  const ir::Operation* loadB = nullptr;
  const ir::Operation* dot = nullptr;
  const ir::Value* tensorA = nullptr;
  const ir::Value* tensorB = nullptr;
  std::string dimM, dimN, dimK;
  ir::ScalarType abType = ir::ScalarType::BF16;
  bool bKMajor = false;  // B stored [N][K] (order = [0, 1])
  double accInit = 0.0;
  // Ops of the for_tiles body after the reduce, in order, excluding the final tile.yield.
  std::vector<const ir::Operation*> epilogue;
  // The kernel's parameters, in launch order: tensor arguments, then scalars, then dims.
  struct Param {
    std::string name;
    const ir::Operation* decl = nullptr;  // tile.input/output/scalar; null for a dim
    ir::Type type;                        // the kern type: ptr<e>, a scalar, or i32 for a dim
  };
  std::vector<Param> params;
};

// Returns nullopt after reporting why the program is not a GEMM this strategy can lower.
std::optional<GemmProgram> analyzeGemm(const ir::Operation& program, const std::string& strategy,
                                       ir::DiagnosticEngine& diag);

// Row-major means the last axis is contiguous (no order, or order = [1, 0]).
bool isRowMajor2d(const ir::Type& tensor);

}  // namespace kiln
