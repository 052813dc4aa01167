// _kiln: the extension module under the `kiln` Python package (python/kiln/). It binds the public
// C++ API only (include/kiln/), as any user of an installed Kiln would.
#include <nanobind/nanobind.h>

#include <cstring>
#include <string>

#include "kiln/dialects.h"
#include "kiln/ir/diagnostics.h"
#include "kiln/ir/types.h"
#include "python/src/bindings.h"

namespace nb = nanobind;

namespace {
bool isCppSource(const std::string& file) {
  for (const char* ext : {".h", ".hpp", ".cpp", ".cc"})
    if (file.size() > std::strlen(ext) && file.compare(file.size() - std::strlen(ext), std::string::npos, ext) == 0)
      return true;
  return false;
}
}  // namespace

NB_MODULE(_kiln, m) {
  kiln::registerAllDialects();
  // kiln.Error: a user error (a bad program, config or launch) with Kiln's sentences.
  static nb::exception<kiln::ir::Error> error(m, "Error", PyExc_ValueError);
  // Its text: each diagnostic, without a place in C++ source (these bindings, or a header whose
  // default argument took the caller's location: no Python user wrote either; the traceback shows
  // the user's line instead); parse errors and a Python DSL's lines keep theirs.
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const kiln::ir::Error& e) {
      std::string text;
      for (const auto& d : e.diagnostics()) {
        if (!text.empty()) text += "\n";
        text += isCppSource(d.loc.file) ? "error: " + d.message : d.str();
      }
      PyErr_SetString(error.ptr(), text.c_str());
    }
  });
  nb::enum_<kiln::ir::ScalarType>(m, "dtype")
      .value("i1", kiln::ir::ScalarType::I1)
      .value("i32", kiln::ir::ScalarType::I32)
      .value("i64", kiln::ir::ScalarType::I64)
      .value("f32", kiln::ir::ScalarType::F32)
      .value("f16", kiln::ir::ScalarType::F16)
      .value("bf16", kiln::ir::ScalarType::BF16)
      .value("f8e4m3", kiln::ir::ScalarType::F8E4M3)
      .value("f8e5m2", kiln::ir::ScalarType::F8E5M2);
  kiln::python::bindDsl(m);
  kiln::python::bindCompile(m);
  kiln::python::bindTune(m);
}
