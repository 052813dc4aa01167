#pragma once
// The GPU half of `kiln run`: compile for the device present, launch on seeded inputs, and check the
// outputs against the interpreter (every element, or sampled tiles of a large problem).
#include <cstdint>
#include <string>

namespace kiln::tools {
// `verify`: "auto", "full" or "sample" (interp/verify_outputs.h).
int runOnGpu(const std::string& programText, const std::string& dims, uint64_t seed, const std::string& config,
             const std::string& verify);
}
