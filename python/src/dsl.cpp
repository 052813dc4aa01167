// The DSL for Python: kiln.Program mirrors kiln::ProgramBuilder (include/kiln/program_builder.h).
//
//   p = kiln.Program("gemm")
//   M, N, K = p.dims("M", "N", "K")
//   A = p.input("A", kiln.bf16, [M, K]); B = p.input("B", kiln.bf16, [K, N]); C = p.output("C", kiln.bf16, [M, N])
//   def body(m, n):
//       acc = p.reduce(K, p.zeros(kiln.f32, [m, n]), lambda k, acc: kiln.dot(A[m, k], B[k, n], acc))
//       C[m, n] = kiln.cast(kiln.bf16, acc)
//   p.tile([M, N], body)
//   module = p.finish()
//
// Memory-bound programs take a whole dim at once (p.span) and reduce along it:
//
//   def body(m):
//       n = p.span(N)
//       x = kiln.cast(kiln.f32, X[m, n])
//       e = kiln.exp(x - x.max(N))
//       Y[m, n] = kiln.cast(kiln.bf16, e / e.sum(N))
//   p.tile([M], body)
//
// Python cannot hook a rebinding the way `acc = dot(..., acc)` reads in C++, so the loop-carried
// tile of p.reduce is explicit: an initial tile in, the body's result out. A mistake raises
// kiln.Error with the builder's sentence; Python's traceback shows the user's line.
#include <nanobind/nanobind.h>
#include <nanobind/stl/function.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/variant.h>
#include <nanobind/stl/vector.h>

#include <variant>

#include "kiln/program_builder.h"
#include "python/src/bindings.h"

namespace nb = nanobind;

namespace kiln::python {
namespace {

using Num = std::variant<Tile, Scalar, double>;  // what math takes: a tile, a scalar argument or a number

Operand operand(const Num& x) {
  if (auto* t = std::get_if<Tile>(&x)) return Operand(*t);
  if (auto* s = std::get_if<Scalar>(&x)) return Operand(*s);
  return Operand(std::get<double>(x));
}

std::vector<Ext> extents(const std::vector<std::variant<Dim, int64_t>>& shape) {
  std::vector<Ext> out;
  for (const auto& e : shape) {
    if (auto* d = std::get_if<Dim>(&e)) out.emplace_back(*d);
    else out.emplace_back(std::get<int64_t>(e));
  }
  return out;
}

std::vector<Idx> indices(const nb::handle& key) {
  std::vector<Idx> out;
  auto one = [&](nb::handle h) {
    if (nb::isinstance<Coord>(h)) out.emplace_back(nb::cast<Coord>(h));
    else out.emplace_back(nb::cast<Index>(h));
  };
  if (nb::isinstance<nb::tuple>(key))
    for (nb::handle h : nb::borrow<nb::tuple>(key)) one(h);
  else
    one(key);
  return out;
}

}  // namespace

void bindDsl(nb::module_& m) {
  nb::class_<Dim>(m, "Dim").def_ro("name", &Dim::name).def("__repr__", [](const Dim& d) { return "Dim(" + d.name + ")"; });
  nb::class_<Coord>(m, "Coord").def_ro("dim", &Coord::dim);
  nb::class_<Index>(m, "Index");
  nb::class_<Scalar>(m, "Scalar");
  auto tile = nb::class_<Tile>(m, "Tile");
  tile.def_prop_ro("dtype", [](const Tile& t) { return t.type().elem(); });
  tile.def("__repr__", [](const Tile& t) { return t.builder()->describe(t.value()); });
  // Arithmetic with tiles, scalar arguments and numbers, either side.
  tile.def("__add__", [](const Tile& a, const Num& b) { return a + operand(b); })
      .def("__radd__", [](const Tile& a, const Num& b) { return operand(b) + a; })
      .def("__sub__", [](const Tile& a, const Num& b) { return a - operand(b); })
      .def("__rsub__", [](const Tile& a, const Num& b) { return operand(b) - a; })
      .def("__mul__", [](const Tile& a, const Num& b) { return a * operand(b); })
      .def("__rmul__", [](const Tile& a, const Num& b) { return operand(b) * a; })
      .def("__truediv__", [](const Tile& a, const Num& b) { return a / operand(b); })
      .def("__rtruediv__", [](const Tile& a, const Num& b) { return operand(b) / a; })
      .def("__neg__", [](const Tile& a) { return -a; })
      .def("__pow__", [](const Tile& a, double e) { return kiln::pow(a, e); })
      // Comparisons give i1 tiles for kiln.where (a reflected one, 0 < x, arrives as x > 0). == and
      // != stay Python's identity (kiln.eq / kiln.ne compare elements).
      .def("__lt__", [](const Tile& a, const Num& b) { return a < operand(b); })
      .def("__le__", [](const Tile& a, const Num& b) { return a <= operand(b); })
      .def("__gt__", [](const Tile& a, const Num& b) { return a > operand(b); })
      .def("__ge__", [](const Tile& a, const Num& b) { return a >= operand(b); })
      // Reductions along a spanned dim: x.sum(N), x.max(N), x.min(N), x.mean(N).
      .def("sum", [](const Tile& x, const Dim& d) { return kiln::sum(x, d); }, nb::arg("dim"))
      .def("max", [](const Tile& x, const Dim& d) { return kiln::max(x, d); }, nb::arg("dim"))
      .def("min", [](const Tile& x, const Dim& d) { return kiln::min(x, d); }, nb::arg("dim"))
      .def("mean", [](const Tile& x, const Dim& d) { return kiln::mean(x, d); }, nb::arg("dim"));

  nb::class_<Tensor>(m, "Tensor")
      .def_prop_ro("name", &Tensor::name)
      .def("__getitem__", [](const Tensor& t, nb::handle key) { return TensorAccess(t, indices(key)).load(); })
      .def("__setitem__", [](const Tensor& t, nb::handle key, const Tile& v) { TensorAccess(t, indices(key)) = v; })
      .def("item", [](const Tensor& t) { return t.item(); });

  nb::class_<ProgramBuilder>(m, "Program")
      .def(nb::init<std::string>(), nb::arg("name"))
      .def("dims", [](ProgramBuilder& p, nb::args names) {
        std::vector<Dim> out;
        for (nb::handle n : names) out.push_back(p.dim(Name(nb::cast<std::string>(n))));
        return out;
      })
      .def("dim", [](ProgramBuilder& p, const std::string& name) { return p.dim(Name(name)); })
      // `strides`: one per axis, a dim or a number (kiln::strides): a leading dimension, a batch stride.
      .def("input", [](ProgramBuilder& p, const std::string& name, ScalarType dtype,
                       const std::vector<std::variant<Dim, int64_t>>& shape, std::vector<int64_t> order,
                       const std::optional<std::vector<std::variant<Dim, int64_t>>>& strides) {
        if (strides) return p.input(name, dtype, extents(shape), Strides(extents(*strides)));
        return p.input(name, dtype, extents(shape), std::move(order));
      }, nb::arg("name"), nb::arg("dtype"), nb::arg("shape"), nb::arg("order") = std::vector<int64_t>{},
         nb::arg("strides") = nb::none())
      .def("output", [](ProgramBuilder& p, const std::string& name, ScalarType dtype,
                        const std::vector<std::variant<Dim, int64_t>>& shape, std::vector<int64_t> order,
                        const std::optional<std::vector<std::variant<Dim, int64_t>>>& strides) {
        if (strides) return p.output(name, dtype, extents(shape), Strides(extents(*strides)));
        return p.output(name, dtype, extents(shape), std::move(order));
      }, nb::arg("name"), nb::arg("dtype"), nb::arg("shape"), nb::arg("order") = std::vector<int64_t>{},
         nb::arg("strides") = nb::none())
      .def("scalar", [](ProgramBuilder& p, const std::string& name, ScalarType dtype) { return p.scalar(name, dtype); },
           nb::arg("name"), nb::arg("dtype") = ScalarType::F32)
      .def("scales", [](ProgramBuilder& p, const std::string& name, const std::vector<std::variant<Dim, int64_t>>& shape,
                        std::vector<int64_t> block, std::vector<int64_t> order) {
        return p.scales(name, extents(shape), std::move(block), std::move(order));
      }, nb::arg("name"), nb::arg("shape"), nb::arg("block"), nb::arg("order") = std::vector<int64_t>{})
      // The ragged tile loop (ProgramBuilder::tile_grouped): body(g, coords...) for every group g;
      // bounds="offsets" (cumulative ends) or "counts" (the masked layout) of `ragged` per group.
      .def("tile_grouped", [](ProgramBuilder& p, const Dim& groups, const Dim& ragged, const Tensor& bounds,
                              const std::vector<Dim>& dims, const nb::callable& body, const std::string& kind) {
        if (kind != "offsets" && kind != "counts") throw nb::value_error("bounds must be 'offsets' or 'counts'");
        Ragged r = kind == "offsets" ? Ragged::byOffsets(ragged, bounds) : Ragged::byCounts(ragged, bounds);
        switch (dims.size()) {
          case 1: p.tile_grouped(groups, r, {dims[0]}, [&](Index g, Coord a) { body(g, a); }); break;
          case 2: p.tile_grouped(groups, r, {dims[0], dims[1]}, [&](Index g, Coord a, Coord b) { body(g, a, b); }); break;
          default: throw nb::value_error("Program.tile_grouped takes 1 or 2 dims");
        }
      }, nb::arg("groups"), nb::arg("ragged"), nb::arg("bounds"), nb::arg("dims"), nb::arg("body"),
         nb::arg("kind") = "offsets")
      .def("tile", [](ProgramBuilder& p, const std::vector<Dim>& dims, const nb::callable& body) {
        switch (dims.size()) {
          case 1: p.tile({dims[0]}, [&](Coord a) { body(a); }); break;
          case 2: p.tile({dims[0], dims[1]}, [&](Coord a, Coord b) { body(a, b); }); break;
          case 3: p.tile({dims[0], dims[1], dims[2]}, [&](Coord a, Coord b, Coord c) { body(a, b, c); }); break;
          default: throw nb::value_error("Program.tile takes 1 to 3 dims");
        }
      }, nb::arg("dims"), nb::arg("body"))
      .def("reduce", [](ProgramBuilder& p, const Dim& dim, const Tile& init, const nb::callable& body) {
        Tile carried = init;
        p.reduce(dim, [&](Coord k) { carried = nb::cast<Tile>(body(k, carried)); });  // operator=: loop-carried
        return carried;
      }, nb::arg("dim"), nb::arg("init"), nb::arg("body"))
      .def("zeros", [](ProgramBuilder& p, ScalarType dtype, std::vector<Coord> shape) { return p.zeros(dtype, std::move(shape)); })
      .def("full", [](ProgramBuilder& p, ScalarType dtype, std::vector<Coord> shape, double v) {
        return p.full(dtype, std::move(shape), v);
      })
      .def("span", [](ProgramBuilder& p, const Dim& d) { return p.span(d); }, nb::arg("dim"))
      .def("iota", [](ProgramBuilder& p, const Coord& c) { return p.iota(c); }, nb::arg("coord"))
      .def("extent", [](ProgramBuilder& p, const Dim& d) { return p.extent(d); }, nb::arg("dim"))
      .def("group_index", [](ProgramBuilder& p, const Tensor& ids, const Coord& rows, int64_t align) {
        return p.group_index(ids, rows, align);
      }, nb::arg("ids"), nb::arg("rows"), nb::arg("align"))
      .def("finish", [](ProgramBuilder& p) { return p.finish(); });

  m.def("dot", [](const Num& a, const Num& b, const Num& acc) { return dot(operand(a), operand(b), operand(acc)); });
  m.def("dot_scaled", [](const Num& a, const Num& sa, const Num& b, const Num& sb, const Num& acc, int64_t blockK) {
    return dot_scaled(operand(a), operand(sa), operand(b), operand(sb), operand(acc), blockK);
  }, nb::arg("a"), nb::arg("a_scale"), nb::arg("b"), nb::arg("b_scale"), nb::arg("acc"), nb::arg("block_k") = 0);
  m.def("cast", [](ScalarType t, const Num& x) { return cast(t, operand(x)); });
  m.def("scale", [](const Num& x, const Num& s) { return scale(operand(x), operand(s)); });
  m.def("maximum", [](const Num& a, const Num& b) { return kiln::max(operand(a), operand(b)); });
  m.def("minimum", [](const Num& a, const Num& b) { return kiln::min(operand(a), operand(b)); });
  m.def("pow", [](const Num& x, double e) { return kiln::pow(operand(x), e); }, nb::arg("x"), nb::arg("exponent"));
  m.def("eq", [](const Num& a, const Num& b) { return kiln::eq(operand(a), operand(b)); });
  m.def("ne", [](const Num& a, const Num& b) { return kiln::ne(operand(a), operand(b)); });
  m.def("where", [](const Tile& cond, const Num& a, const Num& b) { return kiln::where(cond, operand(a), operand(b)); },
        nb::arg("cond"), nb::arg("a"), nb::arg("b"));
  m.def("broadcast", [](const Num& x, std::vector<Coord> shape) { return kiln::broadcast(operand(x), std::move(shape)); },
        nb::arg("x"), nb::arg("shape"));
#define KILN_REDUCE(name) m.def(#name, [](const Num& x, const Dim& d) { return kiln::name(operand(x), d); });
  KILN_REDUCE(sum) KILN_REDUCE(max) KILN_REDUCE(min) KILN_REDUCE(mean)
#undef KILN_REDUCE
#define KILN_UNARY(name) m.def(#name, [](const Num& x) { return kiln::name(operand(x)); });
  KILN_UNARY(abs) KILN_UNARY(exp) KILN_UNARY(relu) KILN_UNARY(gelu_tanh) KILN_UNARY(gelu_erf) KILN_UNARY(silu)
  KILN_UNARY(sigmoid) KILN_UNARY(exp2) KILN_UNARY(log) KILN_UNARY(sqrt) KILN_UNARY(rsqrt) KILN_UNARY(tanh)
  KILN_UNARY(erf)
#undef KILN_UNARY
}

}  // namespace kiln::python
