#pragma once
// The parts of the _kiln extension module (python/src/), each binding one piece of the public API.
#include <nanobind/nanobind.h>

namespace kiln::python {

void bindDsl(nanobind::module_& m);      // kiln.Program and math on tiles (dsl.cpp)
void bindCompile(nanobind::module_& m);  // IR text, select, compile, kernels, the interpreter (compile.cpp)
void bindTune(nanobind::module_& m);     // tune, and select on the current GPU (tune.cpp)

}  // namespace kiln::python
