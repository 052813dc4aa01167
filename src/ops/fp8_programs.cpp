// The FP8 scaled GEMM programs of each scaling mode (contract in fp8_programs.h).
#include "ops/fp8_programs.h"

#include "kiln/program_builder.h"

namespace kiln::ops {

namespace {

constexpr std::pair<Fp8Scaling, std::string_view> kNames[] = {
    {Fp8Scaling::Tensorwise, "tensorwise"},
    {Fp8Scaling::Rowwise, "rowwise"},
    {Fp8Scaling::Block1x128x128x128, "block_1x128_128x128"},
    {Fp8Scaling::Block1x128x1x128, "block_1x128_1x128"},
};

bool blockwise(Fp8Scaling s) { return s == Fp8Scaling::Block1x128x128x128 || s == Fp8Scaling::Block1x128x1x128; }

}  // namespace

std::string_view fp8ScalingName(Fp8Scaling s) {
  for (const auto& [k, n] : kNames)
    if (k == s) return n;
  return "?";
}

std::optional<Fp8Scaling> parseFp8Scaling(std::string_view name) {
  for (const auto& [k, n] : kNames)
    if (n == name) return k;
  return std::nullopt;
}

std::unique_ptr<ir::Module> fp8GemmProgram(const Fp8GemmSpec& spec, const std::string& name) {
  ProgramBuilder p(name);
  auto [M, N, K] = p.dims("M", "N", "K");
  auto A = p.input("A", spec.a, {M, K});
  auto B = p.input("B", spec.b, {K, N}, /*order=*/{0, 1});
  Tensor SA, SB;
  switch (spec.scaling) {
    case Fp8Scaling::Tensorwise:
      SA = p.input("scale_a", f32, {1});
      SB = p.input("scale_b", f32, {1});
      break;
    case Fp8Scaling::Rowwise:
      SA = p.input("scale_a", f32, {M});
      SB = p.input("scale_b", f32, {N});
      break;
    case Fp8Scaling::Block1x128x128x128:
      SA = p.scales("scale_a", {M, K}, {1, 128}, /*order=*/{0, 1});
      SB = p.scales("scale_b", {K, N}, {128, 128}, /*order=*/{0, 1});
      break;
    case Fp8Scaling::Block1x128x1x128:
      SA = p.scales("scale_a", {M, K}, {1, 128}, /*order=*/{0, 1});
      SB = p.scales("scale_b", {K, N}, {128, 1});
      break;
  }
  auto C = p.output("C", spec.out, {M, N});
  p.tile({M, N}, [&](Coord m, Coord n) {
    Tile acc = p.zeros(f32, {m, n});
    if (blockwise(spec.scaling)) {
      p.reduce(K, [&](Coord k) { acc = dot_scaled(A(m, k), SA(m, k), B(k, n), SB(k, n), acc); });
    } else {
      p.reduce(K, [&](Coord k) { acc = dot(A(m, k), B(k, n), acc); });
      acc = spec.scaling == Fp8Scaling::Tensorwise ? scale(acc, SA.item() * SB.item())
                                                   : scale(scale(acc, SA(m)), SB(n));
    }
    C(m, n) = spec.out == f32 ? acc : cast(spec.out, acc);
  });
  return p.finish();
}

}  // namespace kiln::ops
