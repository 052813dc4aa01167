#pragma once
// The C++ DSL: write a kernel at the level of tiles; get tile IR.
//
//   kiln::ProgramBuilder p("gemm_bias_gelu");
//   auto [M, N, K] = p.dims("M", "N", "K");
//   auto A = p.input("A", kiln::bf16, {M, K});
//   auto B = p.input("B", kiln::bf16, {K, N});
//   auto bias = p.input("bias", kiln::f32, {N});
//   auto C = p.output("C", kiln::bf16, {M, N});
//   p.tile({M, N}, [&](kiln::Coord m, kiln::Coord n) {
//     kiln::Tile acc = p.zeros(kiln::f32, {m, n});
//     p.reduce(K, [&](kiln::Coord k) { acc = kiln::dot(A(m, k), B(k, n), acc); });
//     C(m, n) = kiln::cast(kiln::bf16, kiln::gelu_tanh(acc + bias(n)));
//   });
//   std::unique_ptr<kiln::ir::Module> program = p.finish();
//
// Tiles are typed by element type and by the program dims they span, and checked as they are built:
// a mistake (mismatched shapes or dtypes, a tile used outside the loop that made it, a store of the
// wrong dtype) throws kiln::ir::Error carrying the file and line of the user's code and a sentence
// that says what to change. Reassigning a tile inside p.reduce makes it a loop-carried value, the
// way `acc = dot(..., acc)` reads. Block sizes are not part of the program: a schedule picks them.
#include <array>
#include <functional>
#include <initializer_list>
#include <memory>
#include <source_location>
#include <string>
#include <utility>
#include <vector>

#include "kiln/ir/operation.h"

namespace kiln {

using ir::ScalarType;
inline constexpr ScalarType i32 = ScalarType::I32;
inline constexpr ScalarType i64 = ScalarType::I64;
inline constexpr ScalarType f32 = ScalarType::F32;
inline constexpr ScalarType f16 = ScalarType::F16;
inline constexpr ScalarType bf16 = ScalarType::BF16;
inline constexpr ScalarType f8e4m3 = ScalarType::F8E4M3;
inline constexpr ScalarType f8e5m2 = ScalarType::F8E5M2;

class ProgramBuilder;
using SrcLoc = std::source_location;

// A symbolic dim of the program (M, N, K, ...).
struct Dim {
  std::string name;
  ProgramBuilder* pb = nullptr;
};

// The current block along one dim inside p.tile / p.reduce.
struct Coord {
  ir::Value* value = nullptr;
  std::string dim;
  ProgramBuilder* pb = nullptr;
};

// A scalar integer inside a tile loop: the batch index, or a group index read from a tensor.
struct Index {
  ir::Value* value = nullptr;
  ProgramBuilder* pb = nullptr;
};

// A scalar kernel argument (for example alpha).
struct Scalar {
  ir::Value* value = nullptr;
  ProgramBuilder* pb = nullptr;
};

// A value of the program: a tile, or a scalar used as one.
class Tile {
 public:
  Tile() = default;
  Tile(ir::Value* v, ProgramBuilder* pb) : value_(v), pb_(pb) {}
  Tile(const Tile&) = default;
  // Rebinding a tile inside p.reduce makes it loop-carried (see ProgramBuilder::reduce).
  Tile& operator=(const Tile& other);
  ir::Value* value() const { return value_; }
  ProgramBuilder* builder() const { return pb_; }
  const ir::Type& type() const { return value_->type(); }

 private:
  ir::Value* value_ = nullptr;
  ProgramBuilder* pb_ = nullptr;
};

// One extent of a declared tensor: a dim or a constant.
struct Ext {
  ir::Extent e;
  Ext(const Dim& d) : e(ir::Extent::of(d.name)) {}
  Ext(int64_t v) : e(ir::Extent::of(v)) {}
  Ext(int v) : e(ir::Extent::of(int64_t{v})) {}
};

// The strides of a tensor argument in elements, one per axis, for a tensor that is not dense: a
// slice or a padded buffer whose rows are further apart than they are long (a leading dimension,
// BLAS's lda), a batch of matrices at any distance from each other (0: one matrix for every batch).
// Each stride is a Dim (its value given at launch like any dim's) or a constant >= 0; exactly one
// axis has the constant stride 1, the contiguous one:
//   p.input("A", bf16, {M, K}, kiln::strides(lda, 1))          row-major, rows lda apart
//   p.input("A", bf16, {M, K}, kiln::strides(1, lda))          column-major (A^T row-major), lda apart
//   p.input("B", bf16, {Bt, K, N}, kiln::strides(0, ldb, 1))   one B for every batch
// A dense transposed tensor needs no strides: give its `order` (axes fastest-first), {0, 1} for a
// column-major matrix. (docs/layouts.md)
struct Strides {
  explicit Strides(std::vector<Ext> s) : v(std::move(s)) {}
  std::vector<Ext> v;
};
template <typename... E>
Strides strides(E... e) {
  return Strides(std::vector<Ext>{Ext(e)...});
}

// One index of a tensor access: a coord (selects a block) or an index (selects one position).
// The default argument records where in the user's code the access was written.
struct Idx {
  ir::Value* value = nullptr;
  ProgramBuilder* pb = nullptr;
  SrcLoc loc;
  Idx(const Coord& c, SrcLoc l = SrcLoc::current()) : value(c.value), pb(c.pb), loc(l) {}
  Idx(const Index& i, SrcLoc l = SrcLoc::current()) : value(i.value), pb(i.pb), loc(l) {}
};

class Tensor;

// `A(m, k)`: reading it loads a tile; assigning to it stores one.
class TensorAccess {
 public:
  TensorAccess(const Tensor& t, std::vector<Idx> idx);
  operator Tile() const { return load(); }
  Tile load(double other = 0.0) const;
  void operator=(const Tile& value) const;
  const SrcLoc& loc() const { return loc_; }

 private:
  ir::Value* tensor_;
  ProgramBuilder* pb_;
  std::vector<Idx> idx_;
  SrcLoc loc_;
};

class Tensor {
 public:
  // The one element of a tensor of one element (every extent the constant 1) as a scalar tile
  // (tile.load_scalar): a tensorwise scale, `scale(acc, scaleA.item() * scaleB.item())`.
  Tile item(SrcLoc loc = SrcLoc::current()) const;
  Tensor() = default;
  Tensor(ir::Value* v, ProgramBuilder* pb, std::string name) : value_(v), pb_(pb), name_(std::move(name)) {}
  template <typename... I>
  TensorAccess operator()(Idx first, I... rest) const {
    return TensorAccess(*this, std::vector<Idx>{first, Idx(rest, first.loc)...});
  }
  ir::Value* value() const { return value_; }
  ProgramBuilder* builder() const { return pb_; }
  const std::string& name() const { return name_; }

 private:
  ir::Value* value_ = nullptr;
  ProgramBuilder* pb_ = nullptr;
  std::string name_;
};

// An operand of math: a tile, a tensor access (loaded), a scalar argument or a number. The default
// argument records where in the user's code the expression was written.
struct Operand {
  Tile tile;
  double number = 0;
  bool isNumber = false;
  SrcLoc loc;
  Operand(const Tile& t, SrcLoc l = SrcLoc::current()) : tile(t), loc(l) {}
  Operand(const TensorAccess& a, SrcLoc l = SrcLoc::current()) : tile(a.load()), loc(l) {}
  Operand(const Scalar& s, SrcLoc l = SrcLoc::current()) : tile(s.value, s.pb), loc(l) {}
  Operand(double v, SrcLoc l = SrcLoc::current()) : number(v), isNumber(true), loc(l) {}
};

// A dim name with the place it was declared.
struct Name {
  std::string s;
  SrcLoc loc;
  Name(const char* n, SrcLoc l = SrcLoc::current()) : s(n), loc(l) {}
  Name(std::string n, SrcLoc l = SrcLoc::current()) : s(std::move(n)), loc(l) {}
};

// How a ragged tile loop's groups split a dim (p.tile_grouped): by a tensor of the groups'
// cumulative ends along it (offsets, torch._grouped_mm's `offs`: group g owns [offs[g-1], offs[g]),
// from 0 for g = 0), or of their counts (DeepGEMM's masked layout: group g owns [0, counts[g])).
struct Ragged {
  Dim dim;
  Tensor bounds;
  bool offsets = true;
  static Ragged byOffsets(const Dim& d, const Tensor& offs) { return {d, offs, true}; }
  static Ragged byCounts(const Dim& d, const Tensor& counts) { return {d, counts, false}; }
};

class ProgramBuilder {
 public:
  explicit ProgramBuilder(std::string name, SrcLoc loc = SrcLoc::current());
  ~ProgramBuilder();
  ProgramBuilder(const ProgramBuilder&) = delete;
  ProgramBuilder& operator=(const ProgramBuilder&) = delete;

  // Declares dims; each Name records the user's line (hence overloads rather than a variadic template).
  std::array<Dim, 1> dims(const Name& a) { return {dim(a)}; }
  std::array<Dim, 2> dims(const Name& a, const Name& b) { return {dim(a), dim(b)}; }
  std::array<Dim, 3> dims(const Name& a, const Name& b, const Name& c) { return {dim(a), dim(b), dim(c)}; }
  std::array<Dim, 4> dims(const Name& a, const Name& b, const Name& c, const Name& d) {
    return {dim(a), dim(b), dim(c), dim(d)};
  }
  std::array<Dim, 5> dims(const Name& a, const Name& b, const Name& c, const Name& d, const Name& e) {
    return {dim(a), dim(b), dim(c), dim(d), dim(e)};
  }
  Dim dim(const Name& name);

  // Arguments, in the order the kernel takes them. `order` lists axes fastest-first (default:
  // row-major); {0, 1} for a [K, N] tensor means it is stored K-major (transposed), for an [M, K]
  // one column-major.
  Tensor input(const std::string& name, ScalarType dtype, std::vector<Ext> shape,
               std::vector<int64_t> order = {}, SrcLoc loc = SrcLoc::current());
  Tensor output(const std::string& name, ScalarType dtype, std::vector<Ext> shape,
                std::vector<int64_t> order = {}, SrcLoc loc = SrcLoc::current());
  // The same for a strided tensor (kiln::strides above).
  Tensor input(const std::string& name, ScalarType dtype, std::vector<Ext> shape, Strides strides,
               SrcLoc loc = SrcLoc::current());
  Tensor output(const std::string& name, ScalarType dtype, std::vector<Ext> shape, Strides strides,
                SrcLoc loc = SrcLoc::current());
  Scalar scalar(const std::string& name, ScalarType dtype, SrcLoc loc = SrcLoc::current());
  // The block scales of an operand: an f32 input indexed like the operand (`shape`, the operand's
  // dims) that stores one scale per block (tensor<f32, shape, block = [...]>, ceil(extent / block)
  // per axis, in `order`): {1, 128} for DeepSeek-V3's activations [M, K], {128, 128} for its
  // weights [K, N]. kiln::dot_scaled consumes them (docs/fp8-scaling.md).
  Tensor scales(const std::string& name, std::vector<Ext> shape, std::vector<int64_t> block,
                std::vector<int64_t> order = {}, SrcLoc loc = SrcLoc::current());

  // The parallel loop over output tiles. The body gets one Coord per dim.
  template <typename F>
  void tile(std::initializer_list<Dim> tileDims, F&& body, SrcLoc loc = SrcLoc::current()) {
    std::vector<Dim> ds(tileDims);
    beginTiles(ds, nullptr, loc);
    callWithCoords(body, ds.size(), nullptr);
    endTiles();
  }
  // The same with a batch dim: the body gets the batch Index first.
  template <typename F>
  void tile_batched(const Dim& batch, std::initializer_list<Dim> tileDims, F&& body,
                    SrcLoc loc = SrcLoc::current()) {
    std::vector<Dim> ds(tileDims);
    beginTiles(ds, &batch, loc);
    callWithCoords(body, ds.size(), &batch);
    endTiles();
  }

  // The tile loop over ragged groups: the body runs for every group g of `groups` (its Index g
  // first, then one Coord per dim), and inside group g, `ragged.dim` is the range that group owns
  // (Ragged): the loop's tiles of it start at the group's start and stop at its end, or a p.reduce
  // over it iterates only that range. MoE's forward pass (groups of rows, B per group):
  //   p.tile_grouped(G, Ragged::byOffsets(M, offs), {M, N}, [&](Index g, Coord m, Coord n) {
  //     ... dot(A(m, k), B(g, k, n), acc) ... C(m, n) = ...; });
  template <typename F>
  void tile_grouped(const Dim& groups, const Ragged& ragged, std::initializer_list<Dim> tileDims, F&& body,
                    SrcLoc loc = SrcLoc::current()) {
    std::vector<Dim> ds(tileDims);
    beginTiles(ds, &groups, loc, &ragged);
    callWithCoords(body, ds.size(), &groups);
    endTiles();
  }

  // The reduction loop over the blocks of `dim`. Tiles reassigned in the body are carried.
  void reduce(const Dim& dim, const std::function<void(Coord)>& body, SrcLoc loc = SrcLoc::current());

  Tile zeros(ScalarType dtype, std::vector<Coord> shape, SrcLoc loc = SrcLoc::current());
  Tile full(ScalarType dtype, std::vector<Coord> shape, double value, SrcLoc loc = SrcLoc::current());
  // The whole of a dim the tile loop does not split, as one block (tile.span): a tile loaded with
  // it holds every element along that dim (a whole row), which kiln::sum / max / min can reduce.
  //   p.tile({M}, [&](Coord m) { Coord n = p.span(N); Tile x = X(m, n); Y(m) = sum(x, N); });
  Coord span(const Dim& dim, SrcLoc loc = SrcLoc::current());
  // The positions of a coord's block along its dim, as an i32 tile (tile.iota): column indices.
  Tile iota(const Coord& c, SrcLoc loc = SrcLoc::current());
  // The value of a dim at run time, as an f32 scalar (tile.dim, then tile.cast).
  Tile extent(const Dim& dim, SrcLoc loc = SrcLoc::current());
  // The group of the current row block, from a per-row id tensor; groups come in multiples of `align` rows.
  Index group_index(const Tensor& ids, const Coord& rows, int64_t align, SrcLoc loc = SrcLoc::current());

  // Verifies and returns the program as a module holding one tile.program.
  std::unique_ptr<ir::Module> finish(SrcLoc loc = SrcLoc::current());

  // ---- used by the free functions below; not for users ----
  ir::Operation* emit(const SrcLoc& loc, std::string name, std::vector<ir::Value*> operands,
                      std::vector<ir::Type> results, std::vector<ir::NamedAttr> attrs = {});
  [[noreturn]] void fail(const SrcLoc& loc, const std::string& message) const;
  void checkVisible(const ir::Value* v, const SrcLoc& loc, const char* what) const;
  void noteAssign(Tile* handle, ir::Value* oldValue);
  std::string describe(const ir::Value* v) const;  // "tile<f32, [M, N]>" plus its origin

 private:
  struct State;
  void beginTiles(const std::vector<Dim>& ds, const Dim* batch, const SrcLoc& loc, const Ragged* ragged = nullptr);
  void endTiles();
  std::vector<ir::Value*> tileArgs() const;
  // Calls the tile-loop body with its coords (1 to 3), after the batch index when there is one.
  template <typename F>
  void callWithCoords(F& body, size_t n, const Dim* batch) {
    auto args = tileArgs();
    size_t first = batch ? 1 : 0;
    auto coordAt = [&](size_t i) {
      ir::Value* v = args.at(first + i);
      return Coord{v, v->type().shape()[0].sym, this};
    };
    Index b{batch ? args[0] : nullptr, this};
    auto call = [&](auto... cs) {
      if (batch) {
        if constexpr (std::is_invocable_v<F&, Index, decltype(cs)...>) body(b, cs...);
      } else {
        if constexpr (std::is_invocable_v<F&, decltype(cs)...>) body(cs...);
      }
    };
    if (n == 1) call(coordAt(0));
    else if (n == 2) call(coordAt(0), coordAt(1));
    else if (n == 3) call(coordAt(0), coordAt(1), coordAt(2));
  }
  std::unique_ptr<State> st_;
};

// ---- math on tiles (each checks its operands and reports at the user's line) ----
Tile operator+(const Operand& a, const Operand& b);
Tile operator-(const Operand& a, const Operand& b);
Tile operator*(const Operand& a, const Operand& b);
Tile operator/(const Operand& a, const Operand& b);
Tile operator-(const Operand& a);
Tile max(const Operand& a, const Operand& b);
Tile min(const Operand& a, const Operand& b);
Tile abs(const Operand& x);
Tile exp(const Operand& x);
Tile relu(const Operand& x);
Tile gelu_tanh(const Operand& x);
Tile gelu_erf(const Operand& x);
Tile silu(const Operand& x);
Tile sigmoid(const Operand& x);
Tile exp2(const Operand& x);
Tile log(const Operand& x);
Tile sqrt(const Operand& x);
Tile rsqrt(const Operand& x);
Tile tanh(const Operand& x);
Tile erf(const Operand& x);
// x^exponent for a constant exponent.
Tile pow(const Operand& x, double exponent);
Tile cast(ScalarType dtype, const Operand& x);
// Comparisons into i1 tiles (tile.cmp), for kiln::where. Operands pair like arithmetic.
Tile operator<(const Operand& a, const Operand& b);
Tile operator<=(const Operand& a, const Operand& b);
Tile operator>(const Operand& a, const Operand& b);
Tile operator>=(const Operand& a, const Operand& b);
Tile eq(const Operand& a, const Operand& b);
Tile ne(const Operand& a, const Operand& b);
// a where cond holds, else b (tile.select); a and b pair like arithmetic, cond is an i1 tile.
Tile where(const Operand& cond, const Operand& a, const Operand& b);
// x extended to the dims of `shape` (tile.broadcast): x's dims must appear in it, in order.
Tile broadcast(const Operand& x, std::vector<Coord> shape);
// Reductions along a whole dim (tile.reduce_axis; the dim must be spanned, p.span): sum
// accumulates in f32 and returns f32; max and min keep x's element type; mean is sum / extent.
Tile sum(const Operand& x, const Dim& dim);
Tile max(const Operand& x, const Dim& dim);
Tile min(const Operand& x, const Dim& dim);
Tile mean(const Operand& x, const Dim& dim);
// acc + a @ b, f32 accumulation.
Tile dot(const Operand& a, const Operand& b, const Operand& acc);
// acc + a @ b with block scales (tile.dot_scaled): the partial sums over each slice of `blockK`
// along K are multiplied by aScale[m, slice] * bScale[slice, n] and added to acc, as DeepGEMM's
// FP8 promotion does. aScale / bScale are loads of p.scales tensors at a's / b's indices;
// blockK = 0 takes their block along K (which must then agree).
Tile dot_scaled(const Operand& a, const Operand& aScale, const Operand& b, const Operand& bScale, const Operand& acc,
                int64_t blockK = 0);
// x * scales broadcast: scales are f32 [M] (per row), [N] (per column) or a scalar (per block).
Tile scale(const Operand& x, const Operand& scales);

}  // namespace kiln
