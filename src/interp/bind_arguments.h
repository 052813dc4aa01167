#pragma once
// Checks a RunRequest against a program's declared dims, tensors and scalars, and binds every
// argument into the run's context. This is where launch-style user errors are found: each one is a
// diagnostic naming the argument and saying what was expected.
#include <map>
#include <string>
#include <vector>

#include "interp/runtime_values.h"
#include "kiln/interp/interpreter.h"

namespace kiln::interp {

// Binds dims (ctx.extents), tensors (ctx.tensors, and the env entries of tile.input / tile.output
// results) and scalars (env entries of tile.scalar results, rounded to their type). In Reference
// mode each output is bound to `wideOutputs[name]`, initialised from the output tensor's contents.
// Reports every problem it finds and returns false if there was any.
bool bindArguments(const ir::Operation& program, RunRequest& req, RunContext& ctx,
                   std::map<std::string, std::vector<double>>* wideOutputs);

}  // namespace kiln::interp
