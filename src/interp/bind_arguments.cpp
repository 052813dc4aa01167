// Argument checking and binding (see bind_arguments.h).
#include "interp/bind_arguments.h"

#include <algorithm>
#include <set>

#include "dialects/tile/tensor_layout.h"
#include "interp/element_codec.h"
#include "interp/tensor_extents.h"

namespace kiln::interp {
namespace {

std::string listStr(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

class Binder {
 public:
  Binder(const ir::Operation& program, RunRequest& req, RunContext& ctx,
         std::map<std::string, std::vector<double>>* wide)
      : program_(program), req_(req), ctx_(ctx), wide_(wide), name_(program.stringAttr("sym_name")) {}

  bool bind() {
    bool dimsOk = bindDims();
    std::set<std::string> tensorArgs, scalarArgs;
    for (const auto& op : program_.body().operations()) {
      if (op->is("tile.input") || op->is("tile.output")) {
        tensorArgs.insert(op->stringAttr("name"));
        if (dimsOk) bindTensor(*op);
      } else if (op->is("tile.scalar")) {
        scalarArgs.insert(op->stringAttr("name"));
        bindScalar(*op);
      }
    }
    for (const auto& [n, t] : req_.tensors)
      if (!tensorArgs.count(n)) fail(program_.loc()) << "'" << n << "' is not a tensor argument of program '" << name_ << "'";
    for (const auto& [n, v] : req_.scalars)
      if (!scalarArgs.count(n)) fail(program_.loc()) << "'" << n << "' is not a scalar argument of program '" << name_ << "'";
    return ok_;
  }

 private:
  ir::InFlightDiagnostic fail(const ir::Location& loc) {
    ok_ = false;
    return ctx_.diag.error(loc);
  }

  bool bindDims() {
    bool ok = true;
    auto declared = program_.stringsAttr("dims");
    for (const auto& d : declared) {
      auto it = req_.dims.find(d);
      if (it == req_.dims.end()) {
        fail(program_.loc()) << "no value given for dim '" << d << "'";
        ok = false;
      } else if (it->second <= 0) {
        fail(program_.loc()) << "dim '" << d << "' must be positive, got " << it->second;
        ok = false;
      } else {
        ctx_.extents[d] = it->second;
      }
    }
    for (const auto& [d, v] : req_.dims)
      if (std::find(declared.begin(), declared.end(), d) == declared.end())
        fail(program_.loc()) << "'" << d << "' is not a dim of program '" << name_ << "'";
    return ok;
  }

  void bindTensor(const ir::Operation& op) {
    std::string n = op.stringAttr("name");
    const ir::Type& type = op.result()->type();
    auto it = req_.tensors.find(n);
    if (it == req_.tensors.end()) {
      fail(op.loc()) << "no tensor given for " << (op.is("tile.input") ? "input" : "output") << " '" << n << "'";
      return;
    }
    HostTensor* t = it->second;
    if (!t) {
      fail(op.loc()) << "the tensor given for '" << n << "' is null";
      return;
    }
    std::vector<int64_t> logical = *logicalExtents(type, ctx_.extents), extents = storedExtents(type, logical);
    if (t->dtype != type.elem()) {
      fail(op.loc()) << "tensor '" << n << "' is declared " << ir::scalarName(type.elem()) << ", but the tensor given is "
                     << ir::scalarName(t->dtype);
      return;
    }
    if (t->shape != extents) {
      const ir::Attribute* block = type.param("block");
      fail(op.loc()) << "tensor '" << n << "' is declared " << ir::shapeStr(type.shape())
                     << (block ? " in blocks of " + block->str() : "") << " = " << listStr(extents)
                     << ", but the tensor given has shape " << listStr(t->shape);
      return;
    }
    // Dense tensors hold their elements in the declared order; a strided one everything its strides
    // reach, gaps included (tensor_layout.h). Either fits: checkArgumentSizes ran first.
    std::vector<int64_t> order;
    if (const ir::Attribute* o = type.param("order")) order = *o->asInts();
    std::vector<int64_t> strides =
        type.param("strides") ? tile::elementStrides(type, [&](const std::string& d) { return ctx_.extents.at(d); })
                              : elementStrides(extents, order);
    int64_t elements = *tile::spanElements(extents, strides);
    int64_t need = elements * elementBytes(t->dtype);
    if (static_cast<int64_t>(t->bytes.size()) != need) {
      fail(op.loc()) << "tensor '" << n << "' has " << t->bytes.size() << " bytes, but its " << elements << " "
                     << ir::scalarName(t->dtype) << " elements" << (type.param("strides") ? " (strided)" : "")
                     << " need " << need;
      return;
    }
    if (op.is("tile.output") && tile::selfOverlaps(extents, strides)) {
      fail(op.loc()) << "output '" << n << "' has strides " << listStr(strides) << " under which two of its "
                     << "elements share storage; an output's elements must not overlap";
      return;
    }
    BoundTensor& b = ctx_.tensors[n];
    b = BoundTensor{n, t->dtype, logical, std::move(strides),
                    type.param("block") ? ir::blockOf(type) : std::vector<int64_t>{}, t->bytes.data(), nullptr,
                    elementBytes(t->dtype)};
    if (wide_ && op.is("tile.output")) {
      auto& w = (*wide_)[n];
      w = toDoubles(*t);
      b.wide = &w;
    }
    ctx_.env[op.result()] = &b;
  }

  void bindScalar(const ir::Operation& op) {
    std::string n = op.stringAttr("name");
    auto it = req_.scalars.find(n);
    if (it == req_.scalars.end()) {
      fail(op.loc()) << "no value given for scalar '" << n << "'";
      return;
    }
    ir::ScalarType t = op.result()->type().elem();
    double v = roundToType(it->second, t);
    ctx_.env[op.result()] = ir::isFloat(t) ? Scalar::ofFloat(t, v) : Scalar::ofInt(t, static_cast<int64_t>(v));
  }

  const ir::Operation& program_;
  RunRequest& req_;
  RunContext& ctx_;
  std::map<std::string, std::vector<double>>* wide_;
  std::string name_;
  bool ok_ = true;
};

}  // namespace

bool bindArguments(const ir::Operation& program, RunRequest& req, RunContext& ctx,
                   std::map<std::string, std::vector<double>>* wideOutputs) {
  return Binder(program, req, ctx, wideOutputs).bind();
}

}  // namespace kiln::interp
