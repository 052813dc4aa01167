// kiln::tune and kiln::select on the current GPU, for kiln.autotune and kiln.compile
// (python/kiln/tune.py): the context is the one current on this thread (torch's).
#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/string.h>

#include "kiln/runtime/driver.h"
#include "kiln/select.h"
#include "kiln/tune.h"
#include "python/src/bindings.h"

namespace nb = nanobind;

namespace kiln::python {
namespace {

runtime::Context currentContext(const char* what) {
  std::string why;
  const runtime::Driver* drv = runtime::Driver::get(&why);
  if (!drv) throw ir::Error({}, std::string(what) + " needs a GPU, and none is available here: " + why);
  // torch's context when torch has made one current on this thread; else the primary context of
  // device 0, the one torch would make (a call before any tensor exists).
  try {
    return runtime::Context::adoptCurrent(*drv);
  } catch (const ir::Error&) {
    return runtime::Context::primary(*drv);
  }
}

nb::dict toDict(const TuneResult& r) {
  nb::list cands;
  for (const auto& c : r.candidates) {
    nb::dict d;
    d["config"] = c.config;
    d["origin"] = c.origin;
    d["score"] = c.score;
    d["registers"] = c.registers;
    d["shared_bytes"] = c.sharedBytes;
    d["us"] = c.microseconds >= 0 ? nb::cast(c.microseconds) : nb::none();
    d["dropped"] = c.dropped;
    cands.append(d);
  }
  nb::dict d;
  d["config"] = r.config;
  d["us"] = r.microseconds;
  d["why"] = r.why;
  d["cached"] = r.fromCache;
  d["seconds"] = r.seconds;
  d["verified"] = r.verified;
  d["cache_file"] = r.cacheFile;
  d["space"] = r.space;
  d["assembled"] = r.assembled;
  nb::dict phases;
  phases["compile"] = r.compileSeconds;
  phases["inputs"] = r.inputSeconds;
  phases["screen"] = r.screenSeconds;
  phases["timing"] = r.timingSeconds;
  phases["check"] = r.checkSeconds;
  d["phases"] = phases;
  d["candidates"] = cands;
  return d;
}

}  // namespace

void bindTune(nb::module_& m) {
  m.def("tune", [](const ir::Module& mod, const std::map<std::string, int64_t>& dims, int finalists, int reps,
                   bool exhaustive, bool useCache, double budgetSeconds, const std::string& cacheDir, bool progress,
                   int screenReps, double screenSeconds, int maxCandidates) {
    TuneOptions o;
    o.finalists = finalists;
    o.reps = reps;
    o.exhaustive = exhaustive;
    o.useCache = useCache;
    o.budgetSeconds = budgetSeconds;
    o.screenReps = screenReps;
    o.screenSeconds = screenSeconds;
    o.maxCandidates = maxCandidates;
    o.cacheDir = cacheDir;
    if (progress) o.progress = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
    runtime::Context ctx = currentContext("kiln.autotune");
    ir::DiagnosticEngine diag;
    std::optional<TuneResult> r;
    {
      nb::gil_scoped_release release;  // minutes of compiling and timing, none of it Python's
      r = tune(mod, ctx, dims, o, diag);
    }
    if (!r) throw ir::Error(diag.diagnostics());
    return toDict(*r);
  }, nb::arg("module"), nb::arg("dims"), nb::arg("finalists"), nb::arg("reps"), nb::arg("exhaustive"),
     nb::arg("use_cache"), nb::arg("budget_s"), nb::arg("cache_dir"), nb::arg("progress"),
     nb::arg("screen_reps"), nb::arg("screen_s"), nb::arg("max_candidates"));

  m.def("plan_tune", [](const ir::Module& mod, const std::map<std::string, int64_t>& dims, const std::string& target,
                        int maxCandidates, int sms, double budgetSeconds) {
    auto t = Target::byName(target);
    if (!t) throw ir::Error({}, "kiln.plan_tune: unknown target '" + target + "'; known: " + Target::knownNames());
    TuneOptions o;
    o.maxCandidates = maxCandidates;
    o.budgetSeconds = budgetSeconds;
    ir::DiagnosticEngine diag;
    std::optional<TuneResult> r;
    {
      nb::gil_scoped_release release;  // seconds of compiling on every core
      r = planTune(mod, *t, dims, o, diag, sms);
    }
    if (!r) throw ir::Error(diag.diagnostics());
    return toDict(*r);
  }, nb::arg("module"), nb::arg("dims"), nb::arg("target"), nb::arg("max_candidates"), nb::arg("sms"),
     nb::arg("budget_s"));

  m.def("select_on_device", [](const ir::Module& mod, const std::map<std::string, int64_t>& dims,
                               const std::string& tuningDir) {
    std::string warnings;
    Selection s = select(mod, currentContext("kiln.select on the device"), dims, tuningDir, &warnings);
    nb::dict d;
    d["config"] = s.config;
    d["why"] = s.why;
    d["family"] = s.family;
    d["variant"] = s.variant;
    d["tuned"] = s.tuned;
    d["warnings"] = warnings;
    return d;
  }, nb::arg("module"), nb::arg("dims"), nb::arg("tuning_dir"));
}

}  // namespace kiln::python
