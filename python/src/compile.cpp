// Text IR in and out, kiln::select, kiln::Kernel::build and launch, and the interpreter, for the
// `kiln` Python package (python/kiln/__init__.py wraps these in its own classes).
#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <span>

#include "kiln/compile.h"
#include "kiln/interp/interpreter.h"
#include "kiln/ir/parser.h"
#include "kiln/ir/printer.h"
#include "kiln/ir/verifier.h"
#include "kiln/kernel.h"
#include "kiln/runtime/driver.h"
#include "kiln/sass_stats.h"
#include "kiln/select.h"
#include "kiln/target.h"
#include "python/src/bindings.h"

namespace nb = nanobind;

namespace kiln::python {
namespace {

const ir::Operation& programOf(const ir::Module& m) {
  for (const auto& op : m.body().operations())
    if (op->is("tile.program")) return *op;
  throw ir::Error({}, "the module holds no tile.program");
}

Target targetNamed(const std::string& name) {
  auto t = Target::byName(name);
  if (!t) throw ir::Error({}, "unknown target '" + name + "'; known targets: " + Target::knownNames());
  return *t;
}

// The program's arguments in launch order: {name, kind (input, output, scalar), dtype, shape (dim
// names and numbers), order, block}.
nb::list arguments(const ir::Module& m) {
  nb::list out;
  for (const auto& op : programOf(m).body().operations()) {
    const char* kind = op->is("tile.input") ? "input" : op->is("tile.output") ? "output" : op->is("tile.scalar") ? "scalar" : nullptr;
    if (!kind) continue;
    const ir::Type& t = op->result()->type();
    nb::list shape;
    for (const auto& e : t.shape()) {
      if (e.isSymbolic()) shape.append(nb::str(e.sym.c_str()));
      else shape.append(nb::int_(e.value));
    }
    nb::dict a;
    a["name"] = op->stringAttr("name");
    a["kind"] = kind;
    a["dtype"] = t.elem();
    a["shape"] = shape;
    std::vector<int64_t> order;  // axes fastest-first; empty: row-major
    if (const ir::Attribute* o = t.param("order"))
      if (auto ints = o->asInts()) order = *ints;
    a["order"] = order;
    nb::list strides;  // one per axis (a dim's name or a number) for a strided tensor; empty: dense
    if (const ir::Attribute* st = t.param("strides"))
      for (const ir::Attribute& e : st->asArray()) {
        if (e.isString()) strides.append(nb::str(e.asString().c_str()));
        else strides.append(nb::int_(e.asInt()));
      }
    a["strides"] = strides;
    // A block tensor's block per axis (its shape is ceil(extent / block)); empty: none.
    a["block"] = t.param("block") ? ir::blockOf(t) : std::vector<int64_t>{};
    out.append(a);
  }
  return out;
}

// A compiled kernel and the context it launches in (the one current when it first launches: torch's).
struct PyKernel {
  Kernel kernel;
  std::optional<runtime::Context> ctx;

  void launch(const std::vector<uint64_t>& tensors, const std::vector<double>& scalars,
              const std::map<std::string, int64_t>& dims, uintptr_t stream) {
    if (!ctx) {
      std::string why;
      const runtime::Driver* drv = runtime::Driver::get(&why);
      if (!drv) throw ir::Error({}, "no GPU is available here: " + why);
      ctx = runtime::Context::adoptCurrent(*drv);
    }
    kernel.launch(*ctx, reinterpret_cast<void*>(stream), tensors, scalars, dims);
  }
};

nb::dict resources(const backend::ResourceReport& r) {
  nb::dict d;
  d["kernel"] = r.kernel;
  d["registers"] = r.registers;
  d["barriers"] = r.barriers;
  d["stack_frame_bytes"] = r.stackFrameBytes;
  d["spill_store_bytes"] = r.spillStoreBytes;
  d["spill_load_bytes"] = r.spillLoadBytes;
  d["shared_bytes"] = r.sharedBytes;
  d["const_bytes"] = r.constBytes;
  return d;
}

// Runs the program in the interpreter: `tensors` maps every input and output to its values (f64,
// in storage order, rounded once to the tensor's dtype); returns the outputs' exact values.
std::map<std::string, nb::bytes> interpret(const ir::Module& m, const std::map<std::string, int64_t>& dims,
                                           const std::map<std::string, nb::bytes>& tensors,
                                           const std::map<std::string, double>& scalars) {
  const ir::Operation& program = programOf(m);
  std::map<std::string, interp::HostTensor> host;
  interp::RunRequest req{dims, {}, scalars};
  std::vector<std::string> outputs;
  for (const auto& op : program.body().operations()) {
    if (!op->is("tile.input") && !op->is("tile.output")) continue;
    const std::string name = op->stringAttr("name");
    const ir::Type& t = op->result()->type();
    std::vector<int64_t> shape, block = ir::blockOf(t);  // a block tensor holds ceil(extent / block) per axis
    for (size_t a = 0; a < t.rank(); ++a) {
      const ir::Extent& e = t.shape()[a];
      auto d = dims.find(e.sym);
      if (e.isSymbolic() && d == dims.end()) throw ir::Error({}, "dim " + e.sym + " of tensor " + name + " is not given");
      shape.push_back(ir::storedExtent(e.isSymbolic() ? d->second : e.value, block[a]));
    }
    interp::HostTensor h = interp::makeHostTensor(t.elem(), shape);
    auto given = tensors.find(name);
    if (t.param("strides")) {
      // A strided tensor comes as its whole storage (kiln.interpret lays it out), gaps included.
      if (given == tensors.end()) throw ir::Error({}, "strided tensor " + name + " is not given");
      std::span<const double> values(static_cast<const double*>(given->second.data()), given->second.size() / sizeof(double));
      h = interp::makeStridedHostTensor(t.elem(), shape, values);
    } else if (given != tensors.end()) {
      std::span<const double> values(static_cast<const double*>(given->second.data()), given->second.size() / sizeof(double));
      if (int64_t(values.size()) != interp::numElements(h))
        throw ir::Error({}, "tensor " + name + " has " + std::to_string(values.size()) + " elements; its shape needs " +
                                std::to_string(interp::numElements(h)));
      interp::fillFromDoubles(h, values);
    } else if (op->is("tile.input")) {
      throw ir::Error({}, "input " + name + " is not given");
    }
    if (op->is("tile.output")) outputs.push_back(name);
    host[name] = std::move(h);
  }
  for (auto& [name, h] : host) req.tensors[name] = &h;
  ir::DiagnosticEngine diag;
  if (!interp::run(program, req, diag)) throw ir::Error(diag.diagnostics());
  std::map<std::string, nb::bytes> out;
  for (const auto& name : outputs) {
    std::vector<double> v = interp::toDoubles(host[name]);
    out.emplace(name, nb::bytes(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(double)));
  }
  return out;
}

}  // namespace

void bindCompile(nb::module_& m) {
  nb::class_<ir::Module>(m, "Module")
      .def_static("parse", [](const std::string& text, const std::string& file) {
        ir::DiagnosticEngine diag;
        auto module = ir::parseModule(text, diag, {file, false});
        if (!module || !ir::verify(*module, diag)) throw ir::Error(diag.diagnostics());
        return module;
      }, nb::arg("text"), nb::arg("file") = "<text>")
      .def_prop_ro("text", [](const ir::Module& mod) { return ir::toString(mod); })
      .def_prop_ro("name", [](const ir::Module& mod) { return programOf(mod).stringAttr("sym_name"); })
      .def_prop_ro("dims", [](const ir::Module& mod) { return programOf(mod).stringsAttr("dims"); })
      .def("arguments", &arguments)
      .def("attribute", [](const ir::Module& mod, const std::string& name) -> std::optional<std::string> {
        const ir::Operation& p = programOf(mod);
        if (!p.hasAttr(name)) return std::nullopt;
        return p.stringAttr(name);
      });

  m.def("known_targets", [] {
    std::vector<std::string> names;
    for (const auto& t : Target::all()) names.push_back(t.name);
    return names;
  });
  m.def("select", [](const ir::Module& mod, const std::string& target, const std::map<std::string, int64_t>& dims,
                     const std::map<std::string, int>& alignments) {
    Selection s = select(mod, targetNamed(target), dims, alignments);
    nb::dict d;
    d["config"] = s.config;
    d["why"] = s.why;
    d["family"] = s.family;
    d["variant"] = s.variant;
    return d;
  }, nb::arg("module"), nb::arg("target"), nb::arg("dims"), nb::arg("alignments") = std::map<std::string, int>{});

  nb::class_<PyKernel>(m, "Kernel")
      .def_prop_ro("ptx", [](const PyKernel& k) { return k.kernel.ptx(); })
      .def_prop_ro("cubin", [](const PyKernel& k) { return nb::bytes(k.kernel.cubin().data(), k.kernel.cubin().size()); })
      .def_prop_ro("config", [](const PyKernel& k) { return k.kernel.config(); })
      .def_prop_ro("name", [](const PyKernel& k) { return k.kernel.launchInfo().kernelName; })
      .def_prop_ro("resources", [](const PyKernel& k) { return resources(k.kernel.resources()); })
      .def_prop_ro("launch_json", [](const PyKernel& k) { return launchJson(k.kernel.launchInfo()); })
      .def("sass_opcodes", [](const PyKernel& k) {
        ir::DiagnosticEngine diag;
        auto stats = backend::sassStats(k.kernel.cubin(), diag);
        if (!stats) throw ir::Error(diag.diagnostics());
        return stats->opcodes;
      })
      .def("launch", &PyKernel::launch, nb::arg("tensors"), nb::arg("scalars"), nb::arg("dims"), nb::arg("stream"));

  m.def("compile", [](const ir::Module& mod, const std::string& target, const std::string& config) {
    ir::DiagnosticEngine diag;
    auto k = Kernel::build(mod, targetNamed(target), config, diag);
    if (!k) throw ir::Error(diag.diagnostics());
    return new PyKernel{std::move(*k), std::nullopt};
  }, nb::arg("module"), nb::arg("target"), nb::arg("config"), nb::call_guard<nb::gil_scoped_release>());
  m.def("interpret", &interpret, nb::arg("module"), nb::arg("dims"), nb::arg("tensors"), nb::arg("scalars"));
}

}  // namespace kiln::python
