// The on-disk tuning cache: round trips, misses, damaged and foreign entries, FIFOs and directories
// at an entry's path, concurrent threads and processes, list and clear (the key: tuning_key_test.cpp,
// the JSON: tuning_json_test.cpp).
#include "ops/tuning_cache.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <future>
#include <latch>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "backend/compile_cache.h"
#include "backend/sha256.h"
#include "examples/examples.h"
#include "kiln/ir/parser.h"
#include "kiln/ir/printer.h"
#include "tests/unit/ops/tuning_samples.h"

namespace kiln::ops {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;

// ---- The cache ----------------------------------------------------------------------------------

std::string readBytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

void writeBytes(const fs::path& p, std::string_view bytes) {
  std::ofstream(p, std::ios::binary | std::ios::trunc).write(bytes.data(), bytes.size());
}

std::vector<std::string> warnings(const ir::DiagnosticEngine& diag) {
  std::vector<std::string> out;
  for (const auto& d : diag.diagnostics())
    if (d.severity == ir::Severity::Warning) out.push_back(d.message);
  return out;
}

class TuningCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "kiln-tuning-test-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::set<std::string> fileNames(const fs::path& dir) const {
    std::set<std::string> out;
    for (const auto& e : fs::directory_iterator(dir)) out.insert(e.path().filename().string());
    return out;
  }

  fs::path dir_;
};

TEST_F(TuningCacheTest, DefaultDirFollowsTheEnvironment) {
  auto save = [](const char* n) {
    const char* v = std::getenv(n);
    return v ? std::optional<std::string>(v) : std::nullopt;
  };
  auto restore = [](const char* n, const std::optional<std::string>& v) {
    if (v) setenv(n, v->c_str(), 1); else unsetenv(n);
  };
  auto tune = save("KILN_TUNE_DIR"), cache = save("KILN_CACHE_DIR");
  setenv("KILN_TUNE_DIR", "/t", 1);
  setenv("KILN_CACHE_DIR", "/k", 1);
  fs::path a = TuningCache::defaultDir();
  unsetenv("KILN_TUNE_DIR");
  fs::path b = TuningCache::defaultDir();
  setenv("KILN_TUNE_DIR", "", 1);  // empty is unset
  fs::path c = TuningCache::defaultDir();
  restore("KILN_TUNE_DIR", tune);
  restore("KILN_CACHE_DIR", cache);
  EXPECT_EQ(a, "/t");
  EXPECT_EQ(b, "/k/tuning");
  EXPECT_EQ(c, "/k/tuning");
}

TEST_F(TuningCacheTest, StoreThenLookupReturnsTheEntry) {
  TuningCache cache(dir_ / "nested" / "tuning");  // created on first store
  ir::DiagnosticEngine diag;
  EXPECT_FALSE(cache.lookup(sampleKey(), diag));  // no directory yet: a plain miss
  ASSERT_TRUE(cache.store(sampleKey(), sampleEntry(), diag)) << diag.str();
  auto hit = cache.lookup(sampleKey(), diag);
  ASSERT_TRUE(hit) << diag.str();
  EXPECT_EQ(*hit, sampleEntry());
  EXPECT_TRUE(diag.diagnostics().empty()) << diag.str();
  EXPECT_EQ(cache.entryPath(sampleKey()), dir_ / "nested" / "tuning" / (sampleKey().hex() + ".json"));
  EXPECT_EQ(fileNames(cache.dir()), std::set<std::string>{sampleKey().hex() + ".json"});
  // The file says what it is for.
  json doc = json::parse(readBytes(cache.entryPath(sampleKey())));
  EXPECT_EQ(doc["format"], "kiln tuning entry");
  EXPECT_EQ(doc["key"]["device"]["name"], "NVIDIA H200");
  EXPECT_EQ(doc["entry"]["config"], sampleEntry().config);

  // A second store replaces the first.
  TunedEntry better = sampleEntry("strategy=sm90_ws_persistent bm=128 bn=128 bk=64 stages=5");
  better.microseconds = 398.0;
  ASSERT_TRUE(cache.store(sampleKey(), better, diag)) << diag.str();
  EXPECT_EQ(cache.lookup(sampleKey(), diag), better);
  EXPECT_EQ(fileNames(cache.dir()).size(), 1u);
}

TEST_F(TuningCacheTest, AnotherDeviceTargetVersionOrBucketMisses) {
  TuningCache cache(dir_);
  ir::DiagnosticEngine diag;
  ASSERT_TRUE(cache.store(sampleKey(), sampleEntry(), diag)) << diag.str();
  std::vector<std::pair<const char*, TuningKey>> others;
  auto other = [&](const char* what, auto change) {
    TuningKey k = sampleKey();
    change(k);
    others.emplace_back(what, k);
  };
  other("device name", [](TuningKey& k) { k.device.name = "NVIDIA H100 80GB HBM3"; });
  other("SM count", [](TuningKey& k) { k.device.smCount = 66; });
  other("driver", [](TuningKey& k) { k.device.driverVersion = 12090; });
  other("target", [](TuningKey& k) { k.target = "sm_80"; });
  other("Kiln version", [](TuningKey& k) { k.kilnVersion = "0.0.1"; });
  other("bucket", [](TuningKey& k) { k.bucket["K"] = 50; });
  other("program", [](TuningKey& k) { k.programHash = std::string(64, 'c'); });
  for (const auto& [what, key] : others) {
    EXPECT_FALSE(cache.lookup(key, diag)) << what;
  }
  EXPECT_TRUE(diag.diagnostics().empty()) << diag.str();  // misses, not rejections
  EXPECT_TRUE(cache.lookup(sampleKey(), diag));
}

// Damage the stored entry in each way: each is a miss with one warning that names the file and
// the reason, and the next store replaces it with an entry that is trusted again.
TEST_F(TuningCacheTest, DamagedEntriesAreMissesWithAWarning) {
  TuningCache cache(dir_);
  ir::DiagnosticEngine setup;
  ASSERT_TRUE(cache.store(sampleKey(), sampleEntry(), setup)) << setup.str();
  const fs::path entry = cache.entryPath(sampleKey());
  const std::string good = readBytes(entry);

  TuningKey otherKey = sampleKey();
  otherKey.target = "sm_80";
  ASSERT_TRUE(cache.store(otherKey, sampleEntry(), setup)) << setup.str();
  const std::string otherKeysEntry = readBytes(cache.entryPath(otherKey));
  json noConfig = json::parse(good);
  noConfig["entry"].erase("config");
  json badType = json::parse(good);
  badType["key"]["device"]["driverVersion"] = "12.8";
  json version2 = json::parse(good);
  version2["version"] = 2;
  std::string oversized = good;
  oversized.resize((size_t(1) << 20) + 1, ' ');  // valid JSON, but over the limit

  const std::pair<std::string, std::string> damages[] = {
      {good.substr(0, good.size() / 2), fmt::format("(damaged: the JSON ends early, after {} bytes (truncated?))",
                                                    good.size() / 2)},
      {"", "(damaged: the file is empty)"},
      {"{not json}", "(damaged: not JSON (a syntax error at byte 3))"},  // nlohmann counts from 1: the "o" of "not"
      {otherKeysEntry, "(foreign: written for a different key)"},
      {noConfig.dump(), "(damaged: the field 'entry.config' is missing)"},
      {badType.dump(), "(damaged: the field 'key.device.driverVersion' is a string, not an integer)"},
      {version2.dump(), "(foreign: tuning entry format version 2, this Kiln reads version 1)"},
      {R"({"hello": "world"})", "(foreign: not a Kiln tuning entry"},
      {"[1, 2, 3]", "(foreign: not a Kiln tuning entry"},
      {oversized, fmt::format("({} bytes, larger than any entry Kiln writes)", oversized.size())},
  };
  for (const auto& [bytes, reason] : damages) {
    SCOPED_TRACE(reason);
    writeBytes(entry, bytes);
    ir::DiagnosticEngine diag;
    EXPECT_FALSE(cache.lookup(sampleKey(), diag));
    auto w = warnings(diag);
    ASSERT_EQ(w.size(), 1u) << diag.str();
    EXPECT_TRUE(w[0].starts_with("tuning cache: rejected " + entry.string() + " ")) << w[0];
    EXPECT_NE(w[0].find(reason), std::string::npos) << w[0];
    EXPECT_NE(w[0].find("treating it as a miss"), std::string::npos) << w[0];
    ir::DiagnosticEngine after;
    ASSERT_TRUE(cache.store(sampleKey(), sampleEntry(), after)) << after.str();
    EXPECT_EQ(cache.lookup(sampleKey(), after), sampleEntry());
    EXPECT_TRUE(after.diagnostics().empty()) << after.str();
  }
}

// Runs `read` (a lookup or a list that may meet the FIFO at `fifo`) on a thread, so that a hang
// fails the test instead of stopping it: after a timeout the FIFO's write end is opened, which
// releases a reader blocked in open() or read().
template <typename Read>
auto unlessItBlocks(const fs::path& fifo, Read read) {
  auto result = std::async(std::launch::async, read);
  if (result.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    ADD_FAILURE() << "blocked on the FIFO " << fifo.string();
    int fd = open(fifo.c_str(), O_WRONLY);
    if (fd >= 0) close(fd);
  }
  return result.get();
}

// Anything but a regular file at an entry's path is a miss with a warning, never a blocked open.
TEST_F(TuningCacheTest, AFifoAtAnEntryIsAMissNotAHang) {
  TuningCache cache(dir_);
  const fs::path entry = cache.entryPath(sampleKey());
  ASSERT_EQ(mkfifo(entry.c_str(), 0600), 0);
  ir::DiagnosticEngine diag;
  EXPECT_FALSE(unlessItBlocks(entry, [&] { return cache.lookup(sampleKey(), diag); }));
  EXPECT_EQ(warnings(diag), std::vector<std::string>{"tuning cache: " + entry.string() +
                                                      " is not a regular file; treating it as a miss (remove it)"});
  // list() reads it the same way; the next store replaces it.
  ir::DiagnosticEngine listed;
  EXPECT_TRUE(unlessItBlocks(entry, [&] { return cache.list(listed); }).empty());
  EXPECT_EQ(warnings(listed), warnings(diag));
  ir::DiagnosticEngine after;
  ASSERT_TRUE(cache.store(sampleKey(), sampleEntry(), after)) << after.str();
  EXPECT_TRUE(fs::is_regular_file(entry));
  EXPECT_EQ(cache.lookup(sampleKey(), after), sampleEntry());
  EXPECT_TRUE(after.diagnostics().empty()) << after.str();
}

TEST_F(TuningCacheTest, ADirectoryAtAnEntryIsAMissAndStoringIsAWarning) {
  TuningCache cache(dir_);
  const fs::path entry = cache.entryPath(sampleKey());
  fs::create_directories(entry / "inside");
  ir::DiagnosticEngine diag;
  EXPECT_FALSE(cache.lookup(sampleKey(), diag));
  EXPECT_FALSE(cache.store(sampleKey(), sampleEntry(), diag));
  auto w = warnings(diag);
  ASSERT_EQ(w.size(), 2u) << diag.str();
  EXPECT_EQ(w[0], "tuning cache: " + entry.string() + " is not a regular file; treating it as a miss (remove it)");
  EXPECT_TRUE(w[1].starts_with("tuning cache: cannot store an entry in " + dir_.string() + ": rename to " +
                               entry.string()))
      << w[1];
  EXPECT_TRUE(w[1].ends_with("; continuing without caching it")) << w[1];
  EXPECT_FALSE(diag.hadError());
  EXPECT_EQ(fileNames(dir_), std::set<std::string>{entry.filename().string()}) << "no temporary left behind";
}

TEST_F(TuningCacheTest, AnUnwritableDirectoryIsAWarningNotAnException) {
  writeBytes(dir_ / "a-file", "x");
  TuningCache cache(dir_ / "a-file" / "tuning");  // cannot create a directory under a file
  ir::DiagnosticEngine diag;
  EXPECT_FALSE(cache.store(sampleKey(), sampleEntry(), diag));
  auto w = warnings(diag);
  ASSERT_EQ(w.size(), 1u) << diag.str();
  EXPECT_TRUE(w[0].starts_with("tuning cache: cannot store an entry in " + cache.dir().string() + ": ")) << w[0];
  EXPECT_FALSE(diag.hadError());
  EXPECT_FALSE(cache.lookup(sampleKey(), diag));
  EXPECT_EQ(cache.clear(diag), 0u);
  EXPECT_TRUE(cache.list(diag).empty());
}

// What would not read back is refused before anything is written.
TEST_F(TuningCacheTest, StoreRefusesWhatWouldNotReadBack) {
  TuningCache cache(dir_);
  TunedEntry nan = sampleEntry(), source = sampleEntry(), utf8 = sampleEntry();
  nan.microseconds = std::nan("");
  source.source = "guessed";
  utf8.config = "bm=128 \xff";
  const std::pair<TunedEntry, std::string> cases[] = {
      {nan, "the entry would not read back (the field 'entry.microseconds' is not a finite number)"},
      {source, "the entry would not read back (the field 'entry.source' is \"guessed\", not \"tuned\" or "
               "\"pretuned\")"},
      {utf8, "a field of the key or the entry is not valid UTF-8"},
  };
  for (const auto& [entry, reason] : cases) {
    ir::DiagnosticEngine diag;
    EXPECT_FALSE(cache.store(sampleKey(), entry, diag)) << reason;
    EXPECT_EQ(warnings(diag), std::vector<std::string>{"tuning cache: cannot store an entry in " + dir_.string() +
                                                        ": " + reason + "; continuing without caching it"});
  }
  EXPECT_TRUE(fileNames(dir_).empty());
}

// Eight writers store their own entry under one key while two readers look it up: a reader never
// sees a partial or rejected entry, and what is left is one writer's entry, whole.
TEST_F(TuningCacheTest, ConcurrentThreadsStoreOneKey) {
  TuningCache cache(dir_);
  constexpr int kWriters = 8, kReaders = 2, kRounds = 25;
  std::vector<TunedEntry> entries;
  for (int t = 0; t < kWriters; ++t) entries.push_back(sampleEntry(fmt::format("bm=128 bn={} bk=64", 16 * (t + 1))));
  auto isOneOfThem = [&](const TunedEntry& e) { return std::find(entries.begin(), entries.end(), e) != entries.end(); };
  std::latch start(kWriters + kReaders);
  std::atomic<int> writersLeft{kWriters}, hits{0};
  std::vector<std::string> problems(kWriters + kReaders);
  std::vector<std::thread> threads;
  for (int t = 0; t < kWriters; ++t)
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      for (int r = 0; r < kRounds; ++r) {
        ir::DiagnosticEngine diag;  // one engine per thread: engines are not thread-safe
        if (!cache.store(sampleKey(), entries[t], diag)) problems[t] += diag.str() + "\n";
      }
      --writersLeft;
    });
  for (int r = 0; r < kReaders; ++r)
    threads.emplace_back([&, r] {
      start.arrive_and_wait();
      while (writersLeft > 0) {
        ir::DiagnosticEngine diag;
        auto got = cache.lookup(sampleKey(), diag);
        hits += got.has_value();
        if (!diag.diagnostics().empty() || (got && !isOneOfThem(*got)))
          problems[kWriters + r] += (got ? got->config + ": " : "") + diag.str() + "\n";
      }
    });
  for (auto& th : threads) th.join();
  for (size_t i = 0; i < problems.size(); ++i)
    EXPECT_TRUE(problems[i].empty()) << "thread " << i << ":\n" << problems[i];
  ir::DiagnosticEngine diag;
  auto last = cache.lookup(sampleKey(), diag);
  ASSERT_TRUE(last) << diag.str();
  EXPECT_TRUE(isOneOfThem(*last)) << last->config;
  EXPECT_EQ(fileNames(dir_), std::set<std::string>{sampleKey().hex() + ".json"}) << "no temporaries left behind";
}

// The same across processes: four forked children store their own entry under one key, and look
// it up between stores; a failed store, a rejected or foreign entry makes a child exit non-zero.
TEST_F(TuningCacheTest, ConcurrentProcessesStoreOneKey) {
  TuningCache cache(dir_ / "tuning");
  constexpr int kChildren = 4, kRounds = 50;
  std::vector<TunedEntry> entries;
  for (int c = 0; c < kChildren; ++c) entries.push_back(sampleEntry(fmt::format("bm=64 bn={} stages=3", 64 * (c + 1))));
  auto isOneOfThem = [&](const TunedEntry& e) { return std::find(entries.begin(), entries.end(), e) != entries.end(); };
  std::vector<pid_t> children;
  for (int c = 0; c < kChildren; ++c) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int status = 0;
      for (int r = 0; r < kRounds; ++r) {
        ir::DiagnosticEngine diag;
        if (!cache.store(sampleKey(), entries[c], diag)) status = 1;
        auto got = cache.lookup(sampleKey(), diag);
        if (!got) status = status ? status : 2;
        else if (!isOneOfThem(*got)) status = 3;
        if (!diag.diagnostics().empty()) status = 4;
      }
      _exit(status);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    EXPECT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child exit status " << WEXITSTATUS(status);
  }
  ir::DiagnosticEngine diag;
  auto last = cache.lookup(sampleKey(), diag);
  ASSERT_TRUE(last) << diag.str();
  EXPECT_TRUE(isOneOfThem(*last)) << last->config;
  EXPECT_TRUE(diag.diagnostics().empty()) << diag.str();
  EXPECT_EQ(fileNames(cache.dir()), std::set<std::string>{sampleKey().hex() + ".json"});
}

TEST_F(TuningCacheTest, ListShowsWhatEachEntryIsFor) {
  TuningCache cache(dir_);
  ir::DiagnosticEngine diag;
  EXPECT_TRUE(TuningCache(dir_ / "missing").list(diag).empty());
  std::map<std::string, std::pair<TuningKey, TunedEntry>> stored;
  for (int i = 0; i < 3; ++i) {
    TuningKey k = sampleKey();
    k.bucket["M"] = 40 + i;
    TunedEntry e = sampleEntry(fmt::format("bm={}", 64 << i));
    ASSERT_TRUE(cache.store(k, e, diag)) << diag.str();
    stored[k.hex()] = {k, e};
  }
  ASSERT_TRUE(diag.diagnostics().empty()) << diag.str();
  // Not listed: a damaged entry (with a warning), an entry under another key's name (with a
  // warning), and files that are not entries (silently).
  const std::string damaged(64, 'd'), misplaced(64, 'e');
  writeBytes(dir_ / (damaged + ".json"), "{");
  writeBytes(dir_ / (misplaced + ".json"), readBytes(cache.entryPath(stored.begin()->second.first)));
  writeBytes(dir_ / "notes.json", "{}");
  writeBytes(dir_ / ("." + damaged + ".tmp.1.0"), "{");

  auto listed = cache.list(diag);
  ASSERT_EQ(listed.size(), 3u) << diag.str();
  auto it = stored.begin();
  for (const StoredTuning& s : listed) {
    EXPECT_EQ(s.path, dir_ / (it->first + ".json"));  // by file name
    EXPECT_EQ(s.key, it->second.first);
    EXPECT_EQ(s.entry, it->second.second);
    ++it;
  }
  auto w = warnings(diag);
  ASSERT_EQ(w.size(), 2u) << diag.str();
  EXPECT_NE(w[0].find(damaged + ".json (damaged: the JSON ends early"), std::string::npos) << w[0];
  EXPECT_NE(w[1].find(misplaced + ".json (foreign: its key does not hash to its file name)"), std::string::npos)
      << w[1];
}

TEST_F(TuningCacheTest, ClearRemovesOnlyKilnsFiles) {
  TuningCache cache(dir_);
  ir::DiagnosticEngine diag;
  EXPECT_EQ(TuningCache(dir_ / "missing").clear(diag), 0u);
  TuningKey other = sampleKey();
  other.target = "sm_80";
  ASSERT_TRUE(cache.store(sampleKey(), sampleEntry(), diag)) << diag.str();
  ASSERT_TRUE(cache.store(other, sampleEntry(), diag)) << diag.str();
  const std::string hex = sampleKey().hex();
  writeBytes(dir_ / ("." + hex + ".tmp.4242.7"), "{\"partial");  // left by a writer that died
  writeBytes(dir_ / "notes.txt", "mine");
  writeBytes(dir_ / "abc.json", "{}");                            // not 64 hex digits
  writeBytes(dir_ / (std::string(64, 'A') + ".json"), "{}");      // upper case: not Kiln's
  fs::create_directories(dir_ / "sub" / "dir");
  ASSERT_EQ(mkfifo((dir_ / (std::string(64, 'f') + ".json")).c_str(), 0600), 0);  // a FIFO under an entry's name

  EXPECT_EQ(cache.clear(diag), 4u);
  EXPECT_TRUE(diag.diagnostics().empty()) << diag.str();
  EXPECT_EQ(fileNames(dir_), (std::set<std::string>{"abc.json", "notes.txt", std::string(64, 'A') + ".json", "sub"}));
  EXPECT_FALSE(cache.lookup(sampleKey(), diag));
  EXPECT_TRUE(cache.list(diag).empty());
  EXPECT_EQ(cache.clear(diag), 0u);
  EXPECT_TRUE(diag.diagnostics().empty()) << diag.str();
}

}  // namespace
}  // namespace kiln::ops
