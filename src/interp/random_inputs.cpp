// Seeded program arguments (see random_inputs.h).
#include "interp/random_inputs.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <limits>
#include <random>
#include <thread>

#include "dialects/tile/tensor_layout.h"
#include "dialects/tile/tile_ops.h"
#include "interp/tensor_extents.h"
#include "support/checked_math.h"

namespace kiln::interp {
namespace {

// Stored extents of a declared tensor at these dims, or an empty vector when a dim is missing or
// not positive (run() reports that).
std::vector<int64_t> resolve(const ir::Type& t, const std::map<std::string, int64_t>& dims) {
  auto logical = logicalExtents(t, dims);
  return logical ? storedExtents(t, *logical) : std::vector<int64_t>{};
}

// The tile.group_index op that reads the ids tensor `v`, if any.
const ir::Operation* groupIndexReading(const ir::Value* v) {
  for (const ir::Use& u : v->uses())
    if (u.user->is("tile.group_index") && u.operandIndex == 0) return u.user;
  return nullptr;
}

// The number of groups a group index selects among: the smallest extent of a tensor axis it
// indexes directly, 1 when it indexes none.
int64_t groupCount(const ir::Operation& groupIndex, const std::map<std::string, int64_t>& dims) {
  int64_t g = std::numeric_limits<int64_t>::max();
  for (const ir::Use& u : groupIndex.result()->uses()) {
    const ir::Operation* user = u.user;
    bool indexes = user->is("tile.load") || user->is("tile.store") || user->is("tile.load_scalar");
    if (!indexes || u.operandIndex == 0) continue;
    const ir::Type& t = user->operand(0)->type();
    if (u.operandIndex - 1 >= t.rank()) continue;
    std::vector<int64_t> shape = resolve(t, dims);
    if (!shape.empty()) g = std::min(g, shape[u.operandIndex - 1]);
  }
  return g == std::numeric_limits<int64_t>::max() ? 1 : g;
}

std::vector<double> groupIds(int64_t rows, int64_t align, int64_t groups, std::mt19937_64& rng) {
  std::uniform_int_distribution<int64_t> pick(0, groups - 1);
  // ceil(rows / align) without forming rows + align, which overflows for an align near INT64_MAX.
  std::vector<int64_t> chunkGroup(static_cast<size_t>(rows / align + (rows % align != 0)));
  for (int64_t& g : chunkGroup) g = pick(rng);
  std::sort(chunkGroup.begin(), chunkGroup.end());
  std::vector<double> ids(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) ids[r] = static_cast<double>(chunkGroup[r / align]);
  return ids;
}

// The ragged tile.for_tiles whose group bounds the tensor `v` holds, if any.
const ir::Operation* raggedLoopBoundedBy(const ir::Value* v) {
  for (const ir::Use& u : v->uses())
    if (u.user->is("tile.for_tiles") && u.operandIndex == 0) return u.user;
  return nullptr;
}

// Valid bounds for `groups` groups of a dim of `extent` (tile_ops.h, "Ragged groups"): offsets
// are sorted cut points ending at the extent (groups of random sizes, some possibly empty);
// counts are uniform in [0, extent].
std::vector<double> groupBounds(bool offsets, int64_t groups, int64_t extent, std::mt19937_64& rng) {
  std::uniform_int_distribution<int64_t> pick(0, extent);
  std::vector<int64_t> v(static_cast<size_t>(groups));
  for (int64_t& x : v) x = pick(rng);
  if (offsets) {
    std::sort(v.begin(), v.end());
    v.back() = extent;
  }
  return std::vector<double>(v.begin(), v.end());
}

// SplitMix64's finalizer: a well-mixed 64-bit hash, so that neighbouring chunks get unrelated seeds.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// A large input drawn on every core (the header's contract), straight into its bytes.
HostTensor normalInParallel(ir::ScalarType dtype, const std::vector<int64_t>& shape, uint64_t seed, uint64_t input) {
  HostTensor t = makeHostTensor(dtype, shape);
  const int64_t n = numElements(t), chunks = (n + kChunkElements - 1) / kChunkElements;
  std::atomic<int64_t> next{0};
  auto work = [&] {
    for (int64_t c = next++; c < chunks; c = next++) {
      std::mt19937_64 rng(mix(seed ^ mix(input * 0x100000000ull + uint64_t(c))));
      std::normal_distribution<double> normal(0.0, 1.0);
      for (int64_t i = c * kChunkElements, end = std::min(n, i + kChunkElements); i < end; ++i)
        setElement(t, i, normal(rng));
    }
  };
  const int64_t threads = std::min<int64_t>(chunks, std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (int64_t i = 1; i < threads; ++i) pool.emplace_back(work);
  work();
  for (auto& th : pool) th.join();
  return t;
}

// An output poisoned with NaN in every element: the first element's bytes repeated.
HostTensor poisoned(ir::ScalarType dtype, const std::vector<int64_t>& shape) {
  HostTensor t = makeHostTensor(dtype, shape);
  const size_t e = size_t(elementBytes(dtype));
  if (t.bytes.empty()) return t;
  setElement(t, 0, std::numeric_limits<double>::quiet_NaN());
  for (size_t at = e; at < t.bytes.size(); at += e) std::memcpy(t.bytes.data() + at, t.bytes.data(), e);
  return t;
}

}  // namespace

GeneratedArguments generateArguments(const ir::Operation& program, const std::map<std::string, int64_t>& dims,
                                     uint64_t seed) {
  GeneratedArguments args;
  args.request.dims = dims;
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  uint64_t input = 0;
  for (const auto& op : program.body().operations()) {
    std::string name = op->stringAttr("name");
    if (op->is("tile.scalar")) {
      args.request.scalars[name] = 1.0;
      continue;
    }
    if (!op->is("tile.input") && !op->is("tile.output")) continue;
    const ir::Type& t = op->result()->type();
    std::vector<int64_t> shape = resolve(t, dims);
    // An overflowing size is left out like a missing dim: run() reports it, naming the dim.
    if (shape.empty() || !support::checkedProduct(shape)) continue;
    // A strided tensor's buffer holds everything its strides reach (tensor_layout.h): its gaps get
    // values too, like the rest of a real buffer.
    std::optional<int64_t> elements = numElements(shape);
    if (t.param("strides")) {
      bool known = true;
      auto dim = [&](const std::string& d) {
        auto it = dims.find(d);
        known = known && it != dims.end() && it->second > 0;
        return known ? it->second : int64_t(1);
      };
      std::vector<int64_t> strides = tile::elementStrides(t, dim);
      elements = known ? tile::spanElements(shape, strides) : std::nullopt;
      if (!elements) continue;
    }
    const ir::Operation* group = op->is("tile.input") ? groupIndexReading(op->result()) : nullptr;
    const ir::Operation* ragged = op->is("tile.input") ? raggedLoopBoundedBy(op->result()) : nullptr;
    auto raggedExtent = ragged ? dims.find(ragged->stringAttr("ragged")) : dims.end();
    const bool strided = t.param("strides") != nullptr;
    if (op->is("tile.output") && !strided) {
      args.tensors[name] = poisoned(t.elem(), shape);
      continue;
    }
    if (op->is("tile.input")) ++input;
    const bool bounds = ragged && raggedExtent != dims.end() && raggedExtent->second > 0;
    if (op->is("tile.input") && !strided && !group && !bounds && numElements(shape) >= kParallelElements) {
      args.tensors[name] = normalInParallel(t.elem(), shape, seed, input);
      continue;
    }
    std::vector<double> values(static_cast<size_t>(*elements));
    if (op->is("tile.output")) {
      std::fill(values.begin(), values.end(), std::numeric_limits<double>::quiet_NaN());
    } else if (bounds) {
      values = groupBounds(ragged->stringAttr("bounds") == "offsets", shape[0], raggedExtent->second, rng);
    } else if (group) {
      values = groupIds(shape[0], group->intAttr("align"), groupCount(*group, dims), rng);
      values.resize(static_cast<size_t>(*elements));  // a strided [M] has the unit stride: the same count
    } else {
      for (double& v : values) v = normal(rng);
    }
    args.tensors[name] = t.param("strides") ? makeStridedHostTensor(t.elem(), shape, values)
                                            : makeHostTensor(t.elem(), shape, values);
  }
  for (auto& [name, tensor] : args.tensors) args.request.tensors[name] = &tensor;
  return args;
}

}  // namespace kiln::interp
