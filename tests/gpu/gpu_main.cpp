// The GPU tests' main. Every test runs; where there is no GPU each skips, saying why, and the
// binary then exits with kiln::testing::kNoGpuExitCode, which tests/CMakeLists.txt gives ctest as
// the `gpu` test's SKIP_RETURN_CODE: a machine without a GPU reports the test as skipped, not
// passed. A failure still fails (exit 1), GPU or not.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "kiln/runtime/driver.h"
#include "tests/gpu/no_gpu_exit_code.h"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  std::string why;
  const bool gpu = kiln::runtime::Driver::get(&why) != nullptr;
  if (!gpu) std::printf("kiln: no GPU, every GPU test skips: %s\n", why.c_str());
  const int rc = RUN_ALL_TESTS();
  return rc == 0 && !gpu ? kiln::testing::kNoGpuExitCode : rc;
}
