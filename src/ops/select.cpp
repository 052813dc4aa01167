#include "kiln/select.h"

#include "ops/default_schedule.h"

namespace kiln {

Selection select(const ir::Module& program, const Target& target, const std::map<std::string, int64_t>& dims) {
  // A module without a tile.program is no GEMM: defaultSchedule says so and picks the default.
  const ir::Operation* prog = &program.op();
  for (const auto& op : program.body().operations())
    if (op->is("tile.program")) {
      prog = op.get();
      break;
    }
  ops::DefaultSchedule d = ops::defaultSchedule(*prog, target, dims);
  return {d.config.str(), d.why, d.family, d.variant};
}

}  // namespace kiln
