// Ragged grouped GEMM programs (contract in grouped_programs.h).
#include "ops/grouped_programs.h"

#include "kiln/program_builder.h"

namespace kiln::ops {

std::unique_ptr<ir::Module> groupedGemmProgram(const GroupedGemmSpec& spec, const std::string& name) {
  using L = GroupedGemmSpec::Layout;
  const bool fp8 = ir::isFp8(spec.operands);
  ProgramBuilder p(name);
  auto [G, M, N, K] = p.dims("G", "M", "N", "K");
  Tensor A, B, SA, SB, bounds, C;
  switch (spec.layout) {
    case L::Offsets:
      A = p.input("A", spec.operands, {M, K});
      B = p.input("B", spec.operands, {G, K, N}, /*order=*/{1, 2, 0});
      if (fp8) {
        SA = p.scales("scale_a", {M, K}, {1, 128}, {0, 1});
        SB = p.scales("scale_b", {G, K, N}, {1, 128, 128}, {1, 2, 0});
      }
      bounds = p.input("offsets", i32, {G});
      C = p.output("C", spec.out, {M, N});
      break;
    case L::Masked:
      A = p.input("A", spec.operands, {G, M, K});
      B = p.input("B", spec.operands, {G, K, N}, {1, 2, 0});
      if (fp8) {
        SA = p.scales("scale_a", {G, M, K}, {1, 1, 128}, {1, 2, 0});
        SB = p.scales("scale_b", {G, K, N}, {1, 128, 128}, {1, 2, 0});
      }
      bounds = p.input("counts", i32, {G});
      C = p.output("C", spec.out, {G, M, N});
      break;
    case L::GroupsAlongK:
      // BF16 as torch._grouped_mm(x.t(), dy, offs) gets them (x [K, M] and dy [K, N] row-major);
      // FP8 K-major both (wgmma reads 8-bit operands K-major only; quantization writes them so).
      A = p.input("A", spec.operands, {M, K}, fp8 ? std::vector<int64_t>{} : std::vector<int64_t>{0, 1});
      B = p.input("B", spec.operands, {K, N}, fp8 ? std::vector<int64_t>{0, 1} : std::vector<int64_t>{});
      if (fp8) {
        SA = p.scales("scale_a", {M, K}, {1, 128}, {0, 1});
        SB = p.scales("scale_b", {K, N}, {128, 1});
      }
      bounds = p.input("offsets", i32, {G});
      C = p.output("C", spec.out, {G, M, N});
      break;
  }
  Ragged ragged = spec.layout == L::Masked         ? Ragged::byCounts(M, bounds)
                  : spec.layout == L::GroupsAlongK ? Ragged::byOffsets(K, bounds)
                                                   : Ragged::byOffsets(M, bounds);
  auto out = [&](const Tile& acc) { return spec.out == f32 ? acc : cast(spec.out, acc); };
  p.tile_grouped(G, ragged, {M, N}, [&](Index g, Coord m, Coord n) {
    Tile acc = p.zeros(f32, {m, n});
    p.reduce(K, [&](Coord k) {
      switch (spec.layout) {
        case L::Offsets:
          acc = fp8 ? dot_scaled(A(m, k), SA(m, k), B(g, k, n), SB(g, k, n), acc) : dot(A(m, k), B(g, k, n), acc);
          break;
        case L::Masked:
          acc = fp8 ? dot_scaled(A(g, m, k), SA(g, m, k), B(g, k, n), SB(g, k, n), acc)
                    : dot(A(g, m, k), B(g, k, n), acc);
          break;
        case L::GroupsAlongK:
          acc = fp8 ? dot_scaled(A(m, k), SA(m, k), B(k, n), SB(k, n), acc) : dot(A(m, k), B(k, n), acc);
          break;
      }
    });
    if (spec.layout == L::Offsets) C(m, n) = out(acc);
    else C(g, m, n) = out(acc);
  });
  return p.finish();
}

}  // namespace kiln::ops
