#include "backend/compile_cache.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <latch>
#include <thread>

#include <fmt/format.h>

#include "backend/cache_entry.h"
#include "tests/unit/backend/test_ptx.h"

namespace kiln::backend {
namespace {
namespace fs = std::filesystem;

std::string readBytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

void writeBytes(const fs::path& p, std::string_view bytes) {
  std::ofstream(p, std::ios::binary | std::ios::trunc).write(bytes.data(), bytes.size());
}

// Rejections are warnings, so that the tools print them (a remark was easy to drop).
std::vector<std::string> warnings(const ir::DiagnosticEngine& diag) {
  std::vector<std::string> out;
  for (const auto& d : diag.diagnostics())
    if (d.severity == ir::Severity::Warning) out.push_back(d.message);
  return out;
}

class CompileCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "kiln-cache-test-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Entries that are not temporaries (a writer that crashed could leave those; we leave none).
  std::vector<fs::path> files() const {
    std::vector<fs::path> out;
    for (const auto& e : fs::directory_iterator(dir_)) out.push_back(e.path());
    return out;
  }

  fs::path dir_;
};

TEST_F(CompileCacheTest, DefaultDirFollowsTheEnvironment) {
  auto save = [](const char* n) { const char* v = std::getenv(n); return v ? std::optional<std::string>(v) : std::nullopt; };
  auto restore = [](const char* n, const std::optional<std::string>& v) {
    if (v) setenv(n, v->c_str(), 1); else unsetenv(n);
  };
  auto kiln = save("KILN_CACHE_DIR"), xdg = save("XDG_CACHE_HOME"), home = save("HOME");
  setenv("KILN_CACHE_DIR", "/k", 1);
  setenv("XDG_CACHE_HOME", "/x", 1);
  setenv("HOME", "/h", 1);
  fs::path a = CompileCache::defaultDir();
  unsetenv("KILN_CACHE_DIR");
  fs::path b = CompileCache::defaultDir();
  unsetenv("XDG_CACHE_HOME");
  fs::path c = CompileCache::defaultDir();
  restore("KILN_CACHE_DIR", kiln);
  restore("XDG_CACHE_HOME", xdg);
  restore("HOME", home);
  EXPECT_EQ(a, "/k");
  EXPECT_EQ(b, "/x/kiln");
  EXPECT_EQ(c, "/h/.cache/kiln");
}

TEST_F(CompileCacheTest, SecondCompileIsServedFromTheCache) {
  CompileCache cache(dir_ / "nested" / "dir");  // created on first store
  std::string ptx = testing::stackKernels("sm_80");
  ir::DiagnosticEngine diag;
  auto first = assembleCached(ptx, "sm_80", diag, &cache);
  ASSERT_TRUE(first) << diag.str();
  CacheKey key = cacheKey(ptx, "sm_80");
  ASSERT_TRUE(fs::exists(cache.entryPath(key)));

  // Plant a marker in the stored entry: a hit must return it rather than recompile.
  AssembledKernel marked = *first;
  marked.infoLog = "served from the cache";
  ASSERT_TRUE(cache.store(key, marked, diag));
  auto second = assembleCached(ptx, "sm_80", diag, &cache);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->infoLog, "served from the cache");
  EXPECT_EQ(second->cubin, first->cubin);
  EXPECT_EQ(second->resources, first->resources);
  EXPECT_TRUE(diag.diagnostics().empty()) << diag.str();
}

TEST_F(CompileCacheTest, HitReportsTheStoredWarningsAgain) {
  CompileCache cache(dir_);
  std::string ptx = testing::setmaxnregKernel();
  ir::DiagnosticEngine first, second;
  AssembleOptions nvJitLink;  // the assembler that reports an advisory for this PTX
  nvJitLink.assembler = AssemblerKind::NvJitLink;
  auto a = assembleCached(ptx, "sm_90a", first, &cache, nvJitLink);
  ASSERT_TRUE(a) << first.str();
  ASSERT_FALSE(a->warnings.empty());
  auto b = assembleCached(ptx, "sm_90a", second, &cache, nvJitLink);
  ASSERT_TRUE(b);
  EXPECT_EQ(first.str(), second.str());
}

// Damage the stored entry in each way; each must be noticed, said, and rebuilt to the same bytes.
TEST_F(CompileCacheTest, DamagedEntriesAreRejectedAndRebuilt) {
  CompileCache cache(dir_);
  std::string ptx = testing::mmaKernel("sm_90a");
  ir::DiagnosticEngine setup;
  auto original = assembleCached(ptx, "sm_90a", setup, &cache);
  ASSERT_TRUE(original) << setup.str();
  CacheKey key = cacheKey(ptx, "sm_90a");
  fs::path entry = cache.entryPath(key);
  const std::string good = readBytes(entry);
  ASSERT_GT(good.size(), kCacheHeaderSize);

  std::string flipped = good;
  flipped[good.size() / 2] ^= 0x01;
  std::string foreignVersion = good;
  foreignVersion[8] = 99;
  std::string otherKeysEntry = encodeCacheEntry(cacheKey(ptx, "sm_80"), *original);
  const std::pair<std::string, std::string> damages[] = {
      {good.substr(0, good.size() / 2), "(truncated: payload has"},
      {good.substr(0, 10), "(truncated: 10 bytes, shorter than the 84-byte header)"},
      {"", "(truncated: shorter than the header)"},
      {flipped, "(corrupted: payload checksum mismatch)"},
      {foreignVersion, "(foreign: cache format version 99"},
      {otherKeysEntry, "(foreign: the entry was written for a different key)"},
      {std::string(200, 'z'), "(foreign: not a Kiln cache entry (bad magic))"}};
  for (const auto& [bytes, reason] : damages) {
    SCOPED_TRACE(reason);
    writeBytes(entry, bytes);
    ir::DiagnosticEngine diag;
    auto rebuilt = assembleCached(ptx, "sm_90a", diag, &cache);
    ASSERT_TRUE(rebuilt) << diag.str();
    EXPECT_EQ(rebuilt->cubin, original->cubin);
    EXPECT_EQ(rebuilt->resources, original->resources);
    auto r = warnings(diag);
    ASSERT_EQ(r.size(), 1u) << diag.str();
    EXPECT_NE(r[0].find(entry.string()), std::string::npos) << r[0];
    EXPECT_NE(r[0].find(reason), std::string::npos) << r[0];
    EXPECT_TRUE(r[0].ends_with("; rebuilding it")) << r[0];
    // The rebuilt entry replaced the damaged one and is trusted again.
    ir::DiagnosticEngine after;
    auto hit = cache.lookup(key, after);
    ASSERT_TRUE(hit) << after.str();
    EXPECT_EQ(hit->cubin, original->cubin);
    EXPECT_TRUE(after.diagnostics().empty()) << after.str();
  }
}

// Anything but a regular file at an entry's path is a miss with a warning. A FIFO blocked the
// lookup's open() forever before it was opened O_NONBLOCK; the rebuilt entry replaces it.
TEST_F(CompileCacheTest, AFifoAtAnEntryIsAMissNotAHang) {
  CompileCache cache(dir_);
  std::string ptx = testing::stackKernels("sm_80");
  fs::path entry = cache.entryPath(cacheKey(ptx, "sm_80"));
  ASSERT_EQ(mkfifo(entry.c_str(), 0600), 0);
  ir::DiagnosticEngine diag;
  auto k = assembleCached(ptx, "sm_80", diag, &cache);
  ASSERT_TRUE(k) << diag.str();
  EXPECT_EQ(warnings(diag), std::vector<std::string>{"compile cache: " + entry.string() +
                                                      " is not a regular file; treating it as a miss (remove it, "
                                                      "or run `kiln cache clear`)"});
  EXPECT_TRUE(fs::is_regular_file(entry));
  ir::DiagnosticEngine after;
  EXPECT_TRUE(cache.lookup(cacheKey(ptx, "sm_80"), after)) << after.str();
}

TEST_F(CompileCacheTest, ADirectoryAtAnEntryIsAMissAndAWarning) {
  CompileCache cache(dir_);
  std::string ptx = testing::stackKernels("sm_80");
  fs::path entry = cache.entryPath(cacheKey(ptx, "sm_80"));
  fs::create_directories(entry / "inside");
  ir::DiagnosticEngine diag;
  ASSERT_TRUE(assembleCached(ptx, "sm_80", diag, &cache)) << diag.str();
  auto w = warnings(diag);
  ASSERT_EQ(w.size(), 2u) << diag.str();
  EXPECT_NE(w[0].find("is not a regular file; treating it as a miss"), std::string::npos) << w[0];
  EXPECT_NE(w[1].find("compile cache: cannot store an entry in"), std::string::npos) << w[1];
}

TEST_F(CompileCacheTest, UnwritableCacheIsAWarningNotAFailure) {
  writeBytes(dir_ / "a-file", "x");
  CompileCache cache(dir_ / "a-file" / "cache");  // cannot create a directory under a file
  ir::DiagnosticEngine diag;
  auto k = assembleCached(testing::stackKernels("sm_80"), "sm_80", diag, &cache);
  ASSERT_TRUE(k);
  EXPECT_FALSE(diag.hadError());
  ASSERT_EQ(diag.diagnostics().size(), 1u) << diag.str();
  EXPECT_EQ(diag.diagnostics()[0].severity, ir::Severity::Warning);
  EXPECT_NE(diag.diagnostics()[0].message.find("compile cache: cannot store an entry"), std::string::npos);
}

TEST_F(CompileCacheTest, FailedAssemblyIsNotCached) {
  CompileCache cache(dir_);
  ir::DiagnosticEngine diag;
  EXPECT_FALSE(assembleCached(testing::brokenKernel(), "sm_80", diag, &cache));
  EXPECT_FALSE(assembleCached(testing::stackKernels("sm_80"), "sm_99", diag, &cache));
  EXPECT_TRUE(files().empty());
}

// Eight threads, two rounds each, four distinct (PTX, arch) pairs, all through one directory:
// every compile succeeds without a rejected entry, and every cubin equals a serial, uncached one.
TEST_F(CompileCacheTest, ConcurrentThreadsShareOneDirectory) {
  const std::vector<std::pair<std::string, std::string>> inputs = {
      {testing::mmaKernel("sm_80"), "sm_80"},
      {testing::mmaKernel("sm_90a"), "sm_90a"},
      {testing::stackKernels("sm_80"), "sm_80"},
      {testing::stackKernels("sm_89"), "sm_89"}};
  std::vector<std::vector<char>> expected;
  for (const auto& [ptx, arch] : inputs) {
    ir::DiagnosticEngine diag;
    auto k = assemble(ptx, arch, diag);
    ASSERT_TRUE(k) << diag.str();
    expected.push_back(k->cubin);
  }
  CompileCache cache(dir_);
  constexpr int kThreads = 8, kRounds = 2;
  std::latch start(kThreads);
  std::atomic<int> failures{0};
  std::vector<std::string> problems(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      for (int round = 0; round < kRounds; ++round) {
        size_t which = (t + round) % inputs.size();
        ir::DiagnosticEngine diag;  // one engine per thread: engines are not thread-safe
        auto k = assembleCached(inputs[which].first, inputs[which].second, diag, &cache);
        if (!k || k->cubin != expected[which] || !diag.diagnostics().empty()) {
          ++failures;
          problems[t] += fmt::format("round {} input {}: {}\n", round, which, k ? diag.str() : "failed: " + diag.str());
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_TRUE(problems[t].empty()) << "thread " << t << ":\n" << problems[t];
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(files().size(), inputs.size()) << "one entry per input and no temporaries left behind";
}

// Readers racing writers of the same key must never see a partial entry. The entry is large
// (1 MiB) so that a non-atomic write would be caught half-way.
TEST_F(CompileCacheTest, ReadersNeverSeeAPartialEntry) {
  CompileCache cache(dir_);
  CacheKey key = cacheKey("racy", "sm_90a");
  AssembledKernel big;
  big.arch = "sm_90a";
  big.cubin.assign(1 << 20, '\x5a');
  std::atomic<bool> stop{false};
  std::atomic<int> hits{0}, bad{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < 3; ++w)
    threads.emplace_back([&] {
      ir::DiagnosticEngine diag;
      for (int i = 0; i < 20; ++i) cache.store(key, big, diag);
      if (!diag.diagnostics().empty()) ++bad;
    });
  for (int r = 0; r < 3; ++r)
    threads.emplace_back([&] {
      while (!stop) {
        ir::DiagnosticEngine diag;
        auto k = cache.lookup(key, diag);
        if (k) ++hits;
        if (!diag.diagnostics().empty() || (k && k->cubin != big.cubin)) ++bad;
      }
    });
  for (int w = 0; w < 3; ++w) threads[w].join();
  stop = true;
  for (size_t r = 3; r < threads.size(); ++r) threads[r].join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_GT(hits.load(), 0);
  EXPECT_EQ(files().size(), 1u);
}

// The same race across processes: two forked writers store one key over and over while two
// forked readers look it up until the writers are done; a partial read, a rejected entry or a
// failed write makes a child exit non-zero.
TEST_F(CompileCacheTest, ConcurrentProcessesShareOneDirectory) {
  CompileCache cache(dir_ / "cache");
  CacheKey key = cacheKey("shared across processes", "sm_80");
  AssembledKernel k;
  k.arch = "sm_80";
  k.cubin.assign(1 << 20, '\x11');
  const fs::path done = dir_ / "writers-done";
  auto child = [&](bool writer) {
    int status = 0, reads = 0;
    for (int i = 0; writer ? i < 20 : !fs::exists(done) && i < 1000000; ++i) {
      ir::DiagnosticEngine diag;
      if (writer) {
        if (!cache.store(key, k, diag)) status = 1;
        continue;
      }
      auto got = cache.lookup(key, diag);
      reads += got.has_value();
      if ((got && got->cubin != k.cubin) || !diag.diagnostics().empty()) status = 2;
    }
    _exit(writer || reads > 0 ? status : 3);
  };
  std::vector<pid_t> writers, readers;
  for (int c = 0; c < 4; ++c) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) child(/*writer=*/c < 2);
    (c < 2 ? writers : readers).push_back(pid);
  }
  auto reap = [](pid_t pid) {
    int status = 0;
    EXPECT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child exit status " << WEXITSTATUS(status);
  };
  for (pid_t pid : writers) reap(pid);
  writeBytes(done, "");
  for (pid_t pid : readers) reap(pid);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_ / "cache"), fs::directory_iterator{}), 1);
}

}  // namespace
}  // namespace kiln::backend
