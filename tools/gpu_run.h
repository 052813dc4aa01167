#pragma once
// The GPU half of `kiln run`: compile for the device present, launch on seeded inputs, and check the
// outputs against the interpreter.
#include <cstdint>
#include <string>

namespace kiln::tools {
int runOnGpu(const std::string& programText, const std::string& dims, uint64_t seed, const std::string& config);
}
