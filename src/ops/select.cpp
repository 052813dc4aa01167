#include "kiln/select.h"

#include <fmt/format.h>

#include "ops/bucket_reuse.h"
#include "ops/default_schedule.h"
#include "ops/pretuned.h"
#include "ops/tuning_cache.h"

namespace kiln {
namespace {

const ir::Operation& programOf(const ir::Module& module) {
  for (const auto& op : module.body().operations())
    if (op->is("tile.program")) return *op;
  return module.op();  // no tile.program: defaultSchedule says so and picks the default
}

std::string dimsText(const std::map<std::string, int64_t>& dims) {
  std::string s;
  for (const auto& [d, v] : dims) s += fmt::format("{}{}={}", s.empty() ? "" : ",", d, v);
  return s;
}

}  // namespace

Selection select(const ir::Module& program, const Target& target, const std::map<std::string, int64_t>& dims,
                 const std::map<std::string, int>& baseAlignment) {
  ops::DefaultSchedule d = ops::defaultSchedule(programOf(program), target, dims, baseAlignment);
  return {d.config.str(), d.why, d.family, d.variant, ""};
}

std::optional<Target> targetOf(const runtime::Context& ctx) {
  const auto& p = ctx.properties();
  return Target::byName(fmt::format("sm_{}{}{}", p.ccMajor, p.ccMinor, p.ccMajor == 9 ? "a" : ""));
}

Selection select(const ir::Module& program, const runtime::Context& ctx, const std::map<std::string, int64_t>& dims,
                 const std::string& tuningDir, std::string* warnings) {
  const std::optional<Target> target = targetOf(ctx);
  if (!target) return {ops::kFallbackSchedule, "this GPU (" + ctx.properties().name + ") is not a Kiln target", "", "", ""};
  const ir::Operation& prog = programOf(program);
  if (prog.is("tile.program")) {
    const ops::TuningKey key = ops::tuningKey(prog, target->name, ops::deviceIdentity(ctx), dims);
    const ops::TuningCache cache(tuningDir.empty() ? ops::TuningCache::defaultDir() : std::filesystem::path(tuningDir));
    ir::DiagnosticEngine diag;
    std::optional<ops::TunedEntry> hit = cache.lookup(key, diag);
    if (warnings) *warnings += diag.str();
    if (hit) {
      // At another shape of the bucket, the entry's winner or one of its checked alternates
      // (ops/bucket_reuse.h).
      const ops::BucketChoice pick = ops::chooseInBucket(prog, *target, key.device.smCount, *hit, dims);
      if (!pick.why.empty())
        return {pick.config, fmt::format("kiln tune's entry for this bucket ({}): {}", cache.entryPath(key).string(), pick.why),
                "", "", "tuned"};
      return {hit->config,
              fmt::format("kiln tune's winner at {}, {:.1f} us there ({})", dimsText(hit->dims), hit->microseconds,
                          cache.entryPath(key).string()),
              "", "", "tuned"};
    }
    if (auto pre = ops::pretunedLookup(key))
      return {pre->config,
              fmt::format("pretuned for {} at {}, {:.1f} us there (src/ops/data/pretuned.json)", key.device.name,
                          dimsText(pre->dims), pre->microseconds),
              "", "", "pretuned"};
  }
  return select(program, *target, dims);
}

}  // namespace kiln
