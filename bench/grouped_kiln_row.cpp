// One Kiln kernel's row of kiln_grouped_bench (see grouped_kiln_row.h).
#include "bench/grouped_kiln_row.h"

#include <cstdio>

#include "bench/bench_rows.h"
#include "kiln/target.h"
#include "schedule/config.h"

namespace kiln::bench {

KilnRow kilnRow(const runtime::Context& ctx, const std::string& line, const KilnRowSpec& spec) {
  KilnRow r;
  ir::DiagnosticEngine diag;
  auto config = Config::parse(line, diag);
  if (config) r.kernel = Kernel::build(*spec.program, Target::sm90a(), *config, diag);
  if (!r.kernel) {
    std::printf("  Kiln %s: not built: %s", line.c_str(), diag.str().c_str());
    r.json = {{"config", line}, {"correct", false}, {"status", unsupportedStatus(diag.str())}};
    return r;
  }
  const Kernel& kernel = *r.kernel;
  Launch run = [&](cudaStream_t st) { kernel.launch(ctx, st, spec.ptrs, {}, spec.dims); };
  r.json = {{"config", line}};
  bool ok = false;
  std::optional<std::string> status = unsupportedShape(kernel, spec.ptrs, {}, spec.dims);
  if (!status)
    status = guardedRow([&] {
      ok = spec.check(run, r.json);
      if (ok) r.ms = spec.time(run);
    });
  const double tflops = r.ms > 0 ? spec.flops / r.ms / 1e9 : 0.0;
  r.json["correct"] = ok;
  r.json["status"] = status.value_or("ok");
  r.json["ms"] = r.ms;
  r.json["tflops"] = tflops;
  std::printf("  Kiln %s: %s %.4f ms %.0f TFLOP/s %s\n", line.c_str(), status ? status->c_str() : ok ? "ok" : "BAD",
              r.ms, tflops, spec.describe ? spec.describe(r.json).c_str() : "");
  return r;
}

}  // namespace kiln::bench
