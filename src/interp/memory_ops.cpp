// Masked block loads and stores (see memory_ops.h).
#include "interp/memory_ops.h"

#include <algorithm>

#include "kiln/ir/diagnostics.h"

namespace kiln::interp {
namespace {

constexpr int64_t kOutside = -1;

// For each kept axis, the storage offset of each of its block positions (kOutside past the
// tensor); the dropped axes fold into one base offset. Visiting a tile is then a walk over the
// kept axes that adds one table entry per axis.
struct AccessPlan {
  int64_t base = 0;
  bool allOutside = false;  // an integer index is outside the tensor
  std::vector<std::vector<int64_t>> offsets;
  std::vector<int64_t> shape;
};

AccessPlan plan(const BoundTensor& t, const std::vector<AccessIndex>& idx) {
  KILN_ASSERT(idx.size() == t.extents.size(), "access with the wrong number of indices");
  AccessPlan p;
  for (size_t a = 0; a < idx.size(); ++a) {
    int64_t end = std::min(t.extents[a], idx[a].limit), stride = t.strides[a];
    int64_t block = t.block.empty() ? 1 : t.block[a];  // a block tensor stores position p at p / block
    if (!idx[a].keepsAxis) {
      int64_t pos = idx[a].start;
      if (pos < 0 || pos >= end) p.allOutside = true;
      else p.base += pos / block * stride;
      continue;
    }
    std::vector<int64_t> offs(static_cast<size_t>(idx[a].size));
    for (int64_t r = 0; r < idx[a].size; ++r) {
      int64_t pos = idx[a].start + r;
      offs[r] = pos >= 0 && pos < end ? pos / block * stride : kOutside;
    }
    p.offsets.push_back(std::move(offs));
    p.shape.push_back(idx[a].size);
  }
  return p;
}

// Calls fn(elementIndexInTile, storageOffsetOrOutside) for every element of the planned tile, in
// row-major order of the tile.
template <typename Fn>
void visit(const AccessPlan& p, Fn&& fn) {
  size_t rank = p.shape.size();
  if (rank == 0) {
    fn(int64_t{0}, p.allOutside ? kOutside : p.base);
    return;
  }
  const std::vector<int64_t>& inner = p.offsets[rank - 1];
  int64_t innerSize = p.shape[rank - 1];
  std::vector<int64_t> ctr(rank - 1, 0);
  int64_t outerCount = 1;
  for (size_t a = 0; a + 1 < rank; ++a) outerCount *= p.shape[a];
  for (int64_t o = 0; o < outerCount; ++o) {
    int64_t rowOff = p.allOutside ? kOutside : p.base;
    for (size_t a = 0; a + 1 < rank && rowOff != kOutside; ++a) {
      int64_t off = p.offsets[a][ctr[a]];
      rowOff = off == kOutside ? kOutside : rowOff + off;
    }
    for (int64_t r = 0; r < innerSize; ++r)
      fn(o * innerSize + r, rowOff == kOutside || inner[r] == kOutside ? kOutside : rowOff + inner[r]);
    for (size_t a = rank - 1; a-- > 0;) {  // advance the outer counter, last axis fastest
      if (++ctr[a] < p.shape[a]) break;
      ctr[a] = 0;
    }
  }
}

}  // namespace

TilePtr loadTile(const BoundTensor& t, const std::vector<AccessIndex>& idx, double other) {
  AccessPlan p = plan(t, idx);
  auto tile = std::make_shared<Tile>();
  tile->elem = t.dtype;
  tile->shape = p.shape;
  tile->data.resize(static_cast<size_t>(numElements(p.shape)));
  double* out = tile->data.data();
  visit(p, [&](int64_t i, int64_t off) { out[i] = off == kOutside ? other : t.read(off); });
  return tile;
}

void storeTile(const BoundTensor& t, const std::vector<AccessIndex>& idx, const Tile& tile) {
  AccessPlan p = plan(t, idx);
  KILN_ASSERT(p.shape == tile.shape, "stored tile does not have the shape of the access");
  const double* in = tile.data.data();
  visit(p, [&](int64_t i, int64_t off) {
    if (off != kOutside) t.write(off, in[i]);
  });
}

}  // namespace kiln::interp
