// Eight threads compiling the same and different programs at once, through one disk cache, all
// succeed and give byte-identical PTX and cubins (the same input always gives the same output).
#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include "backend/compile_cache.h"
#include "examples/examples.h"
#include "kiln/compile.h"
#include "kiln/target.h"
#include "schedule/config.h"

namespace kiln {
namespace {

TEST(ConcurrentCompile, EightThreadsSameAndDifferentProgramsAreByteIdentical) {
  auto dir = std::filesystem::path(::testing::TempDir()) / "kiln-concurrent-cache";
  std::filesystem::remove_all(dir);
  backend::CompileCache cache(dir);
  const char* configs[] = {"strategy=sm80_multistage bm=64 bn=64 bk=32 stages=3 warps_m=2 warps_n=2",
                           "strategy=sm80_multistage bm=128 bn=64 bk=32 stages=2 warps_m=2 warps_n=2"};
  const std::string names[] = {"gemm_bf16", "gemm_bias_gelu"};
  struct Out {
    std::string ptx;
    std::vector<char> cubin;
    std::string error;
  };
  std::vector<Out> outs(8);
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      // Thread i compiles program i%2 with config (i/2)%2: four distinct jobs, each done twice.
      auto program = examples::find(names[i % 2])->build();
      ir::DiagnosticEngine diag;
      auto compiled = compile(*program, Target::sm80(), Config::parse(configs[(i / 2) % 2]), diag);
      if (!compiled) {
        outs[i].error = diag.str();
        return;
      }
      auto kernel = backend::assembleCached(compiled->ptx, "sm_80", diag, &cache);
      if (!kernel) {
        outs[i].error = diag.str();
        return;
      }
      outs[i] = {compiled->ptx, kernel->cubin, ""};
    });
  }
  for (auto& t : threads) t.join();
  for (int i = 0; i < 8; ++i) ASSERT_EQ(outs[i].error, "") << "thread " << i;
  for (int i = 0; i < 4; ++i) {
    // Threads i and i+4 did the same job.
    EXPECT_EQ(outs[i].ptx, outs[i + 4].ptx) << "job " << i;
    EXPECT_EQ(outs[i].cubin, outs[i + 4].cubin) << "job " << i;
    EXPECT_FALSE(outs[i].cubin.empty());
  }
  EXPECT_NE(outs[0].ptx, outs[1].ptx);  // different programs differ
  EXPECT_NE(outs[0].ptx, outs[2].ptx);  // different schedules differ
}

}  // namespace
}  // namespace kiln
