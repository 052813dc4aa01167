// kiln::tune (kiln/tune.h): candidates (tune/candidates.h), compiled and assembled in parallel,
// pruned by what the assembler reports, the best ranked timed on the GPU (tune/measure.h), the
// fastest that is correct recorded in the tuning cache (ops/tuning_cache.h).
#include "kiln/tune.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <ctime>
#include <thread>

#include <fmt/format.h>

#include "backend/compile_cache.h"
#include "kiln/kernel.h"
#include "ops/bucket_reuse.h"
#include "ops/tuning_cache.h"
#include "tune/candidates.h"
#include "tune/gemm_space.h"
#include "tune/measure.h"
#include "tune/search.h"

namespace kiln {
namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// What a timed launch costs beyond the kernel itself: the L2 flush before it (a 256 MB write,
// ~70 us on the H200) and the event round trip.
constexpr double kLaunchOverheadUs = 100;

std::string firstLine(const std::string& s) {
  std::string line = s.substr(0, s.find('\n'));
  size_t at = line.find("error: ");
  return at == std::string::npos ? line : line.substr(at + 7);
}

std::string utcNow() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

const ir::Operation* programOf(const ir::Module& module) {
  for (const auto& op : module.body().operations())
    if (op->is("tile.program")) return op.get();
  return nullptr;
}

// Every candidate compiled and assembled, on every core, through the compile cache; a failure
// is kept as its first line.
// Candidates start in ranked order; once `deadline` has passed, none starts ("over the budget").
std::vector<std::optional<Kernel>> buildAll(const ir::Module& module, const Target& target,
                                            const std::vector<tuning::Candidate>& cands,
                                            std::optional<Clock::time_point> deadline, const std::string& cacheDir,
                                            std::vector<std::string>& errors) {
  std::vector<std::optional<Kernel>> kernels(cands.size());
  errors.assign(cands.size(), "");
  const backend::CompileCache cache(cacheDir.empty() ? backend::CompileCache::defaultDir()
                                                     : std::filesystem::path(cacheDir));
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < cands.size(); i = next++) {
      if (deadline && i > 0 && Clock::now() > *deadline) {  // the best ranked always compiles
        errors[i] = "over the budget (--budget-s)";
        continue;
      }
      ir::DiagnosticEngine d;
      kernels[i] = Kernel::build(module, target, cands[i].config, d, &cache);
      if (!kernels[i]) errors[i] = firstLine(d.str());
    }
  };
  const size_t n = std::min<size_t>(cands.size(), std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> threads;
  for (size_t t = 1; t < n; ++t) threads.emplace_back(work);
  work();
  for (auto& t : threads) t.join();
  return kernels;
}

// The screen (TuneOptions::screenReps): every finalist timed briefly, the `finalists` fastest kept
// (in ranked order, as the final round expects); the others are dropped with their screen time,
// and one that cannot launch with the driver's message.
std::vector<size_t> screen(tuning::Measurer& measurer, const std::vector<std::optional<Kernel>>& kernels,
                           std::vector<size_t> finalists, const TuneOptions& options,
                           std::vector<TuneCandidate>& candidates) {
  // The screen's time bound: the best ranked launched once, and as many candidates as fit at its
  // time (each is launched screenReps times plus once untimed, each launch after an L2 flush).
  if (options.screenSeconds > 0) {
    std::vector<tuning::Timing> probe = measurer.time({&*kernels[finalists.front()]}, 1);
    if (probe[0].microseconds >= 0) {
      const double perCandidateUs = (options.screenReps + 1) * (probe[0].microseconds + kLaunchOverheadUs);
      const size_t fit = std::max<size_t>(size_t(options.finalists), size_t(options.screenSeconds * 1e6 / perCandidateUs));
      for (size_t j = fit; j < finalists.size(); ++j)
        candidates[finalists[j]].dropped = fmt::format(
            "over the screen's time (--screen-s {:g}: {} candidates fit at {:.0f} us a launch)", options.screenSeconds,
            fit, probe[0].microseconds);
      if (finalists.size() > fit) finalists.resize(fit);
    }
  }
  std::vector<const Kernel*> all;
  for (size_t i : finalists) all.push_back(&*kernels[i]);
  std::vector<tuning::Timing> t = measurer.time(all, options.screenReps);
  std::vector<size_t> order;
  for (size_t j = 0; j < finalists.size(); ++j) {
    if (t[j].microseconds >= 0) order.push_back(j);
    else candidates[finalists[j]].dropped = "could not launch: " + firstLine(t[j].error);
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return t[a].microseconds < t[b].microseconds; });
  std::vector<size_t> kept;
  for (size_t r = 0; r < order.size(); ++r) {
    size_t j = order[r];
    if (int(r) < options.finalists) kept.push_back(finalists[j]);
    else candidates[finalists[j]].dropped = fmt::format("screened out ({:.2f} us in the screen)", t[j].microseconds);
  }
  std::sort(kept.begin(), kept.end());
  return kept;
}

}  // namespace

std::optional<TuneResult> tune(const ir::Module& module, const runtime::Context& ctx,
                               const std::map<std::string, int64_t>& dims, const TuneOptions& options,
                               ir::DiagnosticEngine& diag) {
  auto target = targetOf(ctx);
  if (!target) {
    diag.error({}) << "kiln tune: this GPU (" << ctx.properties().name << ") is not a Kiln target; known: "
                   << Target::knownNames();
    return std::nullopt;
  }
  return tuning::search(module, *target, ops::deviceIdentity(ctx), dims, options,
                        [&](const ir::Operation& program, ir::DiagnosticEngine& d) {
                          return tuning::gpuMeasurer(ctx, program, dims, options.seed, d);
                        },
                        diag);
}

namespace tuning {
namespace {

// The first half of a search: the candidates compiled and pruned, the finalists (every one that
// assembled without spilling, or with neither the screen nor `exhaustive` the best ranked
// `finalists` of them) named.
struct Compiled {
  std::vector<tuning::Candidate> cands;
  std::vector<std::optional<Kernel>> kernels;
  std::vector<size_t> finalists;
  TuneResult result;
};

std::optional<Compiled> compileCandidates(const ir::Module& module, const ir::Operation& program,
                                          const Target& target, int smCount,
                                          const std::map<std::string, int64_t>& dims, const TuneOptions& options,
                                          Clock::time_point started, ir::DiagnosticEngine& diag) {
  auto say = [&](const std::string& line) {
    if (options.progress) options.progress(line);
  };
  Compiled out;
  std::string why;
  SpaceStats stats;
  const int limit = options.maxCandidates > 0 ? options.maxCandidates : kDefaultMaxCandidates;
  out.cands = tuning::candidates(program, target, dims, &why, smCount, limit, &stats);
  if (out.cands.empty()) {
    diag.error({}) << "kiln tune: no schedule family runs this program: " << why;
    return std::nullopt;
  }
  if (stats.generated)
    out.result.space = fmt::format("{} generated, {} refused by the strategy's rules, {} pruned by the heuristic, "
                                   "{} kept",
                                   stats.generated, stats.invalid, stats.pruned, stats.kept);
  say(fmt::format("kiln tune: {} candidates{}; compiling on {} threads", out.cands.size(),
                  out.result.space.empty() ? "" : " (space: " + out.result.space + ")",
                  std::max(1u, std::thread::hardware_concurrency())));
  std::vector<std::string> errors;
  out.kernels = buildAll(module, target, out.cands,
                         options.budgetSeconds > 0
                             ? std::optional<Clock::time_point>(
                                   started + std::chrono::duration_cast<Clock::duration>(
                                                 std::chrono::duration<double>(options.budgetSeconds)))
                             : std::nullopt,
                         options.compileCacheDir, errors);
  for (size_t i = 0; i < out.cands.size(); ++i) {
    TuneCandidate c;
    c.config = out.cands[i].config.str();
    c.origin = out.cands[i].origin;
    c.score = out.cands[i].score;
    if (!out.kernels[i]) {
      c.dropped = errors[i].rfind("over the budget", 0) == 0 ? errors[i] : "does not compile: " + errors[i];
    } else {
      const auto& r = out.kernels[i]->resources();
      c.registers = r.registers;
      c.sharedBytes = int64_t(r.sharedBytes) + int64_t(out.kernels[i]->launchInfo().dynamicSmemBytes);
      ++out.result.assembled;
      if (r.spills())
        c.dropped = fmt::format("spills {} bytes", r.spillStoreBytes + r.spillLoadBytes);
      else if (!options.exhaustive && options.screenReps <= 0 && int(out.finalists.size()) >= options.finalists)
        c.dropped = "not among the finalists (ranked lower)";
      else
        out.finalists.push_back(i);
    }
    out.result.candidates.push_back(std::move(c));
  }
  out.result.compileSeconds = secondsSince(started);
  say(fmt::format("kiln tune: {} of {} assembled in {:.1f} s; {} go on", out.result.assembled, out.cands.size(),
                  out.result.compileSeconds, out.finalists.size()));
  if (out.finalists.empty()) {
    diag.error({}) << "kiln tune: no candidate assembled without spilling (the first: "
                   << out.result.candidates.front().dropped << ")";
    return std::nullopt;
  }
  return out;
}

bool dimsGiven(const ir::Operation& program, const std::map<std::string, int64_t>& dims, ir::DiagnosticEngine& diag) {
  for (const auto& d : program.stringsAttr("dims"))
    if (!dims.count(d) || dims.at(d) <= 0) {
      diag.error({}) << "kiln tune: dim '" << d << "' needs a positive value (--dims " << d << "=...)";
      return false;
    }
  return true;
}

// The bucketing rule's choices beside the winner (ops/bucket_reuse.h): the next fastest timed
// finalists, up to kAlternates within kAlternateSlack of the winner's time, each checked as the
// winner was (the reference is computed once, so a check costs a launch and a comparison); one
// that is wrong is dropped and said so, never recorded.
constexpr size_t kAlternates = 3;
constexpr double kAlternateSlack = 1.5;

std::vector<ops::TunedAlternate> checkedAlternates(tuning::Measurer& measurer,
                                                   const std::vector<std::optional<Kernel>>& kernels,
                                                   const std::vector<size_t>& finalists, const std::vector<size_t>& order,
                                                   size_t winner, std::vector<TuneCandidate>& candidates) {
  std::vector<ops::TunedAlternate> out;
  const double best = candidates[winner].microseconds;
  for (size_t j : order) {
    if (out.size() == kAlternates) break;
    TuneCandidate& c = candidates[finalists[j]];
    if (finalists[j] == winner || !c.dropped.empty()) continue;
    if (c.microseconds > kAlternateSlack * best) break;
    std::string how;
    std::string wrong = measurer.verify(*kernels[finalists[j]], how);
    if (wrong.empty())
      out.push_back({c.config, c.microseconds});
    else
      c.dropped = "wrong result (an alternate): " + firstLine(wrong);
  }
  return out;
}

}  // namespace

std::optional<TuneResult> search(const ir::Module& module, const Target& target, const ops::DeviceIdentity& device,
                                 const std::map<std::string, int64_t>& dims, const TuneOptions& options,
                                 const MeasurerFactory& makeMeasurer, ir::DiagnosticEngine& diag) {
  const Clock::time_point started = Clock::now();
  auto say = [&](const std::string& line) {
    if (options.progress) options.progress(line);
  };
  const ir::Operation* program = programOf(module);
  if (!program) {
    diag.error({}) << "kiln tune: the module holds no tile.program";
    return std::nullopt;
  }
  if (!dimsGiven(*program, dims, diag)) return std::nullopt;
  const ops::TuningKey key = ops::tuningKey(*program, target.name, device, dims);
  const ops::TuningCache cache(options.cacheDir.empty() ? ops::TuningCache::defaultDir()
                                                        : std::filesystem::path(options.cacheDir));
  if (options.useCache && !options.exhaustive) {
    if (auto hit = cache.lookup(key, diag)) {
      // At another shape of the bucket, the winner or a checked alternate (ops/bucket_reuse.h).
      const ops::BucketChoice pick = ops::chooseInBucket(*program, target, device.smCount, *hit, dims);
      TuneResult result;
      result.config = pick.config;
      result.microseconds = pick.predictedUs;
      result.fromCache = true;
      result.cacheFile = cache.entryPath(key).string();
      std::string at;
      for (const auto& [d, v] : hit->dims) at += fmt::format("{}{}={}", at.empty() ? "" : ",", d, v);
      result.why = fmt::format("cached: {} at {} ({} of {} candidates timed, {}){}", hit->source, at,
                               hit->candidatesTimed, hit->candidatesTotal, hit->date,
                               pick.why.empty() ? "" : "; " + pick.why);
      result.seconds = secondsSince(started);
      return result;
    }
  }
  auto compiled = compileCandidates(module, *program, target, device.smCount, dims, options, started, diag);
  if (!compiled) return std::nullopt;
  std::vector<tuning::Candidate>& cands = compiled->cands;
  std::vector<std::optional<Kernel>>& kernels = compiled->kernels;
  std::vector<size_t>& finalists = compiled->finalists;
  TuneResult& result = compiled->result;
  Clock::time_point step = Clock::now();
  auto measurer = makeMeasurer(*program, diag);
  if (!measurer) return std::nullopt;
  result.inputSeconds = secondsSince(step);
  if (!options.exhaustive && options.screenReps > 0 && int(finalists.size()) > options.finalists) {
    step = Clock::now();
    const size_t screened = finalists.size();
    finalists = screen(*measurer, kernels, finalists, options, result.candidates);
    result.screenSeconds = secondsSince(step);
    say(fmt::format("kiln tune: screened {} candidates with {} launches each in {:.1f} s; timing the {} fastest",
                    screened, options.screenReps, result.screenSeconds, finalists.size()));
  }
  step = Clock::now();
  std::vector<const Kernel*> timed;
  for (size_t i : finalists) timed.push_back(&*kernels[i]);
  std::vector<tuning::Timing> times = measurer->time(timed, std::max(1, options.reps));
  result.timingSeconds = secondsSince(step);
  std::vector<size_t> order;  // indices into finalists, fastest first
  for (size_t j = 0; j < finalists.size(); ++j) {
    TuneCandidate& c = result.candidates[finalists[j]];
    if (times[j].microseconds < 0) {
      c.dropped = "could not launch: " + firstLine(times[j].error);
      continue;
    }
    c.microseconds = times[j].microseconds;
    order.push_back(j);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return times[a].microseconds < times[b].microseconds; });
  say(fmt::format("kiln tune: timed {} in {:.1f} s; checking the fastest", order.size(), secondsSince(started)));
  step = Clock::now();
  std::optional<size_t> winner;
  for (size_t j : order) {
    std::string how;
    std::string wrong = measurer->verify(*kernels[finalists[j]], how);
    TuneCandidate& c = result.candidates[finalists[j]];
    if (wrong.rfind(tuning::kNoReference, 0) == 0) {
      diag.error({}) << "kiln tune: the fastest candidate could not be checked, so nothing was recorded: "
                     << firstLine(wrong.substr(std::string(tuning::kNoReference).size()));
      return std::nullopt;
    }
    if (wrong.empty()) {
      winner = finalists[j];
      result.verified = how;
      break;
    }
    c.dropped = "wrong result: " + firstLine(wrong);
    say("kiln tune: " + c.config + " gave a " + c.dropped + "; trying the next");
  }
  std::vector<ops::TunedAlternate> alternates;
  if (winner && options.record)
    alternates = checkedAlternates(*measurer, kernels, finalists, order, *winner, result.candidates);
  result.checkSeconds = secondsSince(step);
  if (!winner) {
    diag.error({}) << "kiln tune: no timed candidate produced a correct result (the first: "
                   << result.candidates[finalists.front()].dropped << ")";
    return std::nullopt;
  }
  const TuneCandidate& best = result.candidates[*winner];
  result.config = best.config;
  result.microseconds = best.microseconds;
  result.seconds = secondsSince(started);
  result.why = fmt::format("tuned: fastest of {} timed ({} candidates, {} assembled) in {:.1f} s: {}", order.size(),
                           cands.size(), result.assembled, result.seconds, best.origin);
  if (options.record) {
    ops::TunedEntry entry;
    entry.config = result.config;
    entry.microseconds = result.microseconds;
    entry.dims = dims;
    entry.candidatesTimed = int(order.size());
    entry.candidatesTotal = int(cands.size());
    entry.tuneSeconds = result.seconds;
    entry.date = utcNow();
    entry.source = "tuned";
    entry.alternates = std::move(alternates);
    if (cache.store(key, entry, diag)) result.cacheFile = cache.entryPath(key).string();
  }
  return std::move(result);
}

}  // namespace tuning

std::optional<TuneResult> planTune(const ir::Module& module, const Target& target,
                                   const std::map<std::string, int64_t>& dims, const TuneOptions& options,
                                   ir::DiagnosticEngine& diag, int smCount) {
  const Clock::time_point started = Clock::now();
  const ir::Operation* program = programOf(module);
  if (!program) {
    diag.error({}) << "kiln tune: the module holds no tile.program";
    return std::nullopt;
  }
  if (!tuning::dimsGiven(*program, dims, diag)) return std::nullopt;
  auto compiled = tuning::compileCandidates(module, *program, target, smCount, dims, options, started, diag);
  if (!compiled) return std::nullopt;
  compiled->result.seconds = secondsSince(started);
  compiled->result.why = fmt::format("planned: {} candidates, {} assembled, {} would be screened and timed",
                                     compiled->cands.size(), compiled->result.assembled, compiled->finalists.size());
  return std::move(compiled->result);
}

}  // namespace kiln
