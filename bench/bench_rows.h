#pragma once
// One benchmark row per (kernel, shape), whatever happens to it: a shape a kernel does not support
// is a row with status "unsupported: <reason>" and the benchmark goes on to the next one, instead of
// ending the whole run in an uncaught exception. Needs no GPU, so the unit tests check it.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kiln/kernel.h"

namespace kiln::bench {

// "unsupported: <reason>", the reason on one line (diagnostics joined by "; ").
std::string unsupportedStatus(const std::string& reason);

// nullopt when `kernel` accepts a launch on `tensors` at `dims` (Kernel::validate: the launch
// contract, dims, shapes, alignment); else the row's status, naming why.
std::optional<std::string> unsupportedShape(const Kernel& kernel, const std::vector<uint64_t>& tensors,
                                            const std::vector<double>& scalars,
                                            const std::map<std::string, int64_t>& dims);

// Runs `measure`; nullopt when it returned, else the row's status: "unsupported: ..." for a launch
// Kiln refused (ir::Error), "failed: ..." for any other exception (a CUDA or cuBLAS error).
std::optional<std::string> guardedRow(const std::function<void()>& measure);

}  // namespace kiln::bench
