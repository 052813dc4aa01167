#pragma once
// The exit code of kiln_gpu_tests when no test failed and there was no GPU to run them on (the
// autotools convention for "skipped", which ctest's SKIP_RETURN_CODE maps to "Skipped").
namespace kiln::testing {
inline constexpr int kNoGpuExitCode = 77;
}
