// Builds a BF16 GEMM with ProgramBuilder, asks Kiln for its pick at 4096^3 on sm_90a, compiles and
// assembles it (no GPU needed) and prints the pick, its typed config and the resource report. Exit 1
// on any failure.
#include <kiln/kiln.h>

#include <cstdio>
#include <optional>

int main() {
  kiln::ProgramBuilder p("consumer_gemm");
  auto [M, N, K] = p.dims("M", "N", "K");
  auto A = p.input("A", kiln::bf16, {M, K});
  auto B = p.input("B", kiln::bf16, {K, N});
  auto C = p.output("C", kiln::bf16, {M, N});
  p.tile({M, N}, [&](kiln::Coord m, kiln::Coord n) {
    kiln::Tile acc = p.zeros(kiln::f32, {m, n});
    p.reduce(K, [&](kiln::Coord k) { acc = kiln::dot(A(m, k), B(k, n), acc); });
    C(m, n) = kiln::cast(kiln::bf16, acc);
  });
  auto program = p.finish();

  const kiln::Target target = kiln::Target::sm90a();
  kiln::Selection pick = kiln::select(*program, target, {{"M", 4096}, {"N", 4096}, {"K", 4096}});
  std::printf("pick: %s\nconfig: %s\n", pick.why.c_str(), pick.config.c_str());

  // The pick is a canonical config line: it parses to a typed Config that validates for the target
  // and prints back as itself; its strategy's option table is public data.
  kiln::ir::DiagnosticEngine configDiag;
  std::optional<kiln::Config> config = kiln::Config::parse(pick.config, configDiag);
  if (!config || !kiln::validate(*config, target, {}, configDiag) || config->str() != pick.config) {
    std::fprintf(stderr, "the pick's config does not round-trip: %s", configDiag.str().c_str());
    return 1;
  }
  std::printf("strategy %s: %zu options\n", config->strategy.c_str(), kiln::configOptions(config->strategy).size());

  kiln::ir::DiagnosticEngine diag;
  auto kernel = kiln::Kernel::build(*program, target, pick.config, diag);
  if (!kernel) {
    std::fprintf(stderr, "%s", diag.str().c_str());
    return 1;
  }
  std::printf("resources: %s\n", kernel->resources().str().c_str());
  std::printf("cubin: %zu bytes, %zu parameters, %d threads\n", kernel->cubin().size(),
              kernel->launchInfo().params.size(), kernel->launchInfo().threads);
  return kernel->resources().spills() ? 1 : 0;
}
