// The search behind kiln tune with a scripted measurer (no GPU): the fastest candidate whose
// result is correct wins and is recorded; a wrong one is dropped and the next taken; a cached
// winner is returned without measuring; no correct candidate is an error.
#include "tune/search.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <unistd.h>

#include "examples/examples.h"
#include "schedule/config.h"

namespace kiln::tuning {
namespace {

namespace fs = std::filesystem;

const std::map<std::string, int64_t> kDims{{"M", 1024}, {"N", 1024}, {"K", 1024}};
const ops::DeviceIdentity kDevice{"Scripted GPU", 132, 13000};

// Deeper pipelines and wider tiles "run faster"; configs in `wrong` give a wrong result.
class Scripted : public Measurer {
 public:
  Scripted(std::set<std::string> wrong, int* made, size_t* timed = nullptr) : wrong_(std::move(wrong)), timed_(timed) {
    ++*made;
  }
  std::vector<Timing> time(const std::vector<const Kernel*>& kernels, int reps) override {
    EXPECT_GT(reps, 0);
    std::vector<Timing> t;
    for (const Kernel* k : kernels) {
      Config c = Config::parse(k->config());
      t.push_back({1000.0 / (c.stages * c.bm * c.bn / 1024.0), ""});
    }
    if (timed_) *timed_ += kernels.size();
    return t;
  }
  std::string verify(const Kernel& k, std::string& how) override {
    how = "scripted";
    if (noReference) return std::string(kNoReference) + "error: needs 4.6 GiB of interpreter memory (scripted)\n";
    return wrong_.count(k.config()) ? "output C: rel_fro_err 1.0e+00 (scripted)" : "";
  }
  bool noReference = false;

 private:
  std::set<std::string> wrong_;
  size_t* timed_;  // kernels timed, summed over calls (the measurer dies with the search)
};

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("kiln-tune-test-" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};

// A factory of Scripted measurers that all give right results.
MeasurerFactory allRight(int* made, size_t* timed = nullptr, bool noReference = false) {
  return [=](const ir::Operation&, ir::DiagnosticEngine&) {
    auto m = std::make_unique<Scripted>(std::set<std::string>{}, made, timed);
    m->noReference = noReference;
    return std::unique_ptr<Measurer>(std::move(m));
  };
}

TuneOptions optionsFor(const TempDir& dir) {
  TuneOptions o;
  o.cacheDir = dir.path.string();
  o.finalists = 4;
  o.reps = 3;
  o.screenReps = 0;  // the finalists are the best ranked (TheScreenFindsTheFastestOfAll: with it)
  return o;
}

TEST(TuneSearch, TheFastestCorrectCandidateWinsAndIsRecorded) {
  TempDir dir;
  auto m = examples::gemmBf16();
  int made = 0;
  std::set<std::string> wrong;
  // A first run to learn which candidate is fastest, then the same search with it made wrong.
  ir::DiagnosticEngine diag;
  TuneOptions o = optionsFor(dir);
  o.record = false;
  auto factory = [&](const ir::Operation&, ir::DiagnosticEngine&) { return std::make_unique<Scripted>(wrong, &made); };
  auto first = search(*m, Target::sm80(), kDevice, kDims, o, factory, diag);
  ASSERT_TRUE(first) << diag.str();
  EXPECT_TRUE(first->cacheFile.empty());
  wrong.insert(first->config);
  o.record = true;
  auto r = search(*m, Target::sm80(), kDevice, kDims, o, factory, diag);
  ASSERT_TRUE(r) << diag.str();
  EXPECT_NE(r->config, first->config);
  EXPECT_FALSE(r->fromCache);
  int timed = 0, notFinal = 0;
  for (const auto& c : r->candidates) {
    if (c.microseconds >= 0) {
      ++timed;
      if (c.config != r->config) EXPECT_LE(r->microseconds, c.microseconds + (wrong.count(c.config) ? 1e9 : 0));
    }
    if (c.config == first->config) EXPECT_EQ(c.dropped.rfind("wrong result: output C", 0), 0u) << c.dropped;
    notFinal += c.dropped == "not among the finalists (ranked lower)";
  }
  EXPECT_EQ(timed, 4);
  EXPECT_GT(notFinal, 0);
  ASSERT_FALSE(r->cacheFile.empty());
  EXPECT_TRUE(fs::is_regular_file(r->cacheFile));
  EXPECT_EQ(made, 2);
  // The same key again: the cached winner, nothing measured.
  auto cached = search(*m, Target::sm80(), kDevice, kDims, o, factory, diag);
  ASSERT_TRUE(cached) << diag.str();
  EXPECT_TRUE(cached->fromCache);
  EXPECT_EQ(cached->config, r->config);
  EXPECT_EQ(made, 2);
  EXPECT_EQ(cached->why.rfind("cached: tuned at K=1024,M=1024,N=1024", 0), 0u) << cached->why;
  // A nearby shape shares the bucket; another device does not.
  auto nearby = search(*m, Target::sm80(), kDevice, {{"M", 1100}, {"N", 1024}, {"K", 1024}}, o, factory, diag);
  ASSERT_TRUE(nearby);
  EXPECT_TRUE(nearby->fromCache);
  auto other = search(*m, Target::sm80(), {"Another GPU", 114, 13000}, kDims, o, factory, diag);
  ASSERT_TRUE(other);
  EXPECT_FALSE(other->fromCache);
  EXPECT_EQ(made, 3);
}

TEST(TuneSearch, ExhaustiveTimesEveryCandidateThatAssembles) {
  TempDir dir;
  auto m = examples::gemmBf16();
  int made = 0;
  size_t timed = 0;
  TuneOptions o = optionsFor(dir);
  o.exhaustive = true;
  ir::DiagnosticEngine diag;
  auto r = search(*m, Target::sm80(), kDevice, kDims, o,
                  allRight(&made, &timed),
                  diag);
  ASSERT_TRUE(r) << diag.str();
  size_t assembled = 0;
  for (const auto& c : r->candidates) {
    EXPECT_EQ(c.dropped.find("not among the finalists"), std::string::npos);
    assembled += c.dropped.rfind("does not compile", 0) != 0 && c.dropped.rfind("spills", 0) != 0;
  }
  EXPECT_GT(assembled, 4u);
  EXPECT_EQ(timed, assembled);
}

TEST(TuneSearch, TheScreenFindsTheFastestOfAllAndTimesOnlyTheFinalistsAgain) {
  TempDir dir;
  auto m = examples::gemmBf16();
  int made = 0;
  size_t timed = 0;
  TuneOptions o = optionsFor(dir);
  ir::DiagnosticEngine diag;
  auto factory = allRight(&made, &timed);
  o.exhaustive = true;
  o.record = false;
  auto exhaustive = search(*m, Target::sm80(), kDevice, kDims, o, factory, diag);
  ASSERT_TRUE(exhaustive) << diag.str();
  o.exhaustive = false;
  o.screenReps = 2;
  timed = 0;
  auto r = search(*m, Target::sm80(), kDevice, kDims, o, factory, diag);
  ASSERT_TRUE(r) << diag.str();
  EXPECT_EQ(r->config, exhaustive->config);  // the scripted times rank differently from the heuristic
  size_t screenedOut = 0, eligible = 0;
  for (const auto& c : r->candidates) {
    screenedOut += c.dropped.rfind("screened out (", 0) == 0;
    eligible += c.dropped.empty() || c.dropped.rfind("screened out", 0) == 0;
  }
  EXPECT_EQ(eligible - screenedOut, 4u);
  // The best ranked once (the screen's time bound), every one in the screen, the four finalists again.
  EXPECT_EQ(timed, 1 + eligible + 4);
}

TEST(TuneSearch, TheScreensTimeBoundScreensOnlyTheBestRankedThatFit) {
  TempDir dir;
  auto m = examples::gemmBf16();
  int made = 0;
  size_t timed = 0;
  TuneOptions o = optionsFor(dir);
  o.screenReps = 2;
  o.screenSeconds = 1e-9;  // no candidate fits: the floor is the finalists' count
  ir::DiagnosticEngine diag;
  auto r = search(*m, Target::sm80(), kDevice, kDims, o, allRight(&made, &timed), diag);
  ASSERT_TRUE(r) << diag.str();
  size_t over = 0, screenedOut = 0;
  for (size_t i = 0; i < r->candidates.size(); ++i) {
    const std::string& d = r->candidates[i].dropped;
    if (d.rfind("over the screen's time (--screen-s 1e-09: 4 candidates fit at ", 0) == 0) {
      ++over;
      EXPECT_GE(i, 4u) << "the best ranked are screened";
    }
    screenedOut += d.rfind("screened out", 0) == 0;
  }
  EXPECT_GT(over, 10u);
  EXPECT_EQ(screenedOut, 0u);  // the four that fit are the four finalists
  EXPECT_EQ(timed, 1u + 4u + 4u);  // the probe of the best ranked, the screen, the finalists
  EXPECT_GT(r->screenSeconds, 0);
  EXPECT_GT(r->compileSeconds, 0);
  EXPECT_GT(r->timingSeconds, 0);
}

TEST(TuneSearch, AReferenceThatCannotBeComputedStopsTheSearchAndRecordsNothing) {
  TempDir dir;
  auto m = examples::gemmBf16();
  int made = 0;
  ir::DiagnosticEngine diag;
  auto r = search(*m, Target::sm80(), kDevice, kDims, optionsFor(dir),
                  allRight(&made, nullptr, true),
                  diag);
  EXPECT_FALSE(r);
  EXPECT_NE(diag.str().find("kiln tune: the fastest candidate could not be checked, so nothing was recorded: "
                            "needs 4.6 GiB of interpreter memory (scripted)"),
            std::string::npos)
      << diag.str();
  EXPECT_TRUE(fs::is_empty(dir.path));
}

TEST(TuneSearch, ABudgetSpentBeforeCompilingLeavesOnlyTheBestRankedCandidate) {
  TempDir dir;
  auto m = examples::gemmBf16();
  int made = 0;
  size_t timed = 0;
  TuneOptions o = optionsFor(dir);
  o.budgetSeconds = 1e-9;  // spent before the first build starts
  ir::DiagnosticEngine diag;
  auto r = search(*m, Target::sm80(), kDevice, kDims, o,
                  allRight(&made, &timed),
                  diag);
  ASSERT_TRUE(r) << diag.str();
  ASSERT_GT(r->candidates.size(), 1u);
  EXPECT_EQ(r->config, r->candidates.front().config);
  EXPECT_EQ(timed, 1u);
  for (size_t i = 1; i < r->candidates.size(); ++i)
    EXPECT_EQ(r->candidates[i].dropped, "over the budget (--budget-s)") << r->candidates[i].config;
}

TEST(TuneSearch, NoCorrectCandidateIsAnErrorAndNothingIsRecorded) {
  TempDir dir;
  auto m = examples::gemmBf16();
  int made = 0;
  TuneOptions o = optionsFor(dir);
  ir::DiagnosticEngine diag;
  struct AllWrong : Scripted {
    using Scripted::Scripted;
    std::string verify(const Kernel&, std::string& how) override {
      how = "scripted";
      return "output C: 65536 elements beyond the per-element bound";
    }
  };
  auto r = search(*m, Target::sm80(), kDevice, kDims, o,
                  [&](const ir::Operation&, ir::DiagnosticEngine&) {
                    return std::make_unique<AllWrong>(std::set<std::string>{}, &made);
                  },
                  diag);
  EXPECT_FALSE(r);
  EXPECT_NE(diag.str().find("kiln tune: no timed candidate produced a correct result (the first: wrong result: "
                            "output C: 65536 elements beyond the per-element bound)"),
            std::string::npos)
      << diag.str();
  EXPECT_TRUE(fs::is_empty(dir.path));
}

TEST(TuneSearch, ACandidateThatDoesNotCompileIsDroppedReportedAndNeverRecorded) {
  // On sm_90a at a small shape the 13-stage 64x64 ring is among the best three, and its neighbour
  // with a 14th stage needs more shared memory than a block has: it cannot compile. The scripted
  // times favour deep rings, so it would have won had it compiled.
  TempDir dir;
  auto m = examples::gemmBf16();
  int made = 0;
  TuneOptions o = optionsFor(dir);
  o.maxCandidates = 1;  // the variants and their neighbours: no generated space
  ir::DiagnosticEngine diag;
  const std::map<std::string, int64_t> small{{"M", 1024}, {"N", 480}, {"K", 352}};
  auto r = search(*m, Target::sm90a(), kDevice, small, o, allRight(&made), diag);
  ASSERT_TRUE(r) << diag.str();
  bool dropped = false;
  for (const auto& c : r->candidates)
    if (c.origin == "neighbour of bf16_gemm_sm90_64x64x64_s13_tma: stages 13 -> 14") {
      dropped = true;
      EXPECT_EQ(c.dropped.rfind("does not compile: the pipeline needs 237792 bytes of shared memory", 0), 0u)
          << c.dropped;
      EXPECT_LT(c.microseconds, 0);
      EXPECT_NE(c.config, r->config);
    }
  EXPECT_TRUE(dropped);
  EXPECT_EQ(r->assembled, int(r->candidates.size()) - 2);  // and 128x128 s6's 7th stage
  ops::TuningCache cache(dir.path);
  ir::DiagnosticEngine quiet;
  auto recorded = cache.lookup(ops::tuningKey(*m->body().front(), "sm_90a", kDevice, small), quiet);
  ASSERT_TRUE(recorded);
  EXPECT_EQ(recorded->config, r->config);
}

TEST(TuneSearch, AMissingDimIsRefusedBeforeAnythingCompiles) {
  TempDir dir;
  auto m = examples::gemmBf16();
  int made = 0;
  ir::DiagnosticEngine diag;
  auto r = search(*m, Target::sm80(), kDevice, {{"M", 64}, {"N", 64}}, optionsFor(dir),
                  allRight(&made),
                  diag);
  EXPECT_FALSE(r);
  EXPECT_NE(diag.str().find("kiln tune: dim 'K' needs a positive value (--dims K=...)"), std::string::npos)
      << diag.str();
  EXPECT_EQ(made, 0);
}

}  // namespace
}  // namespace kiln::tuning
