// Block size policy (see block_sizes.h).
#include "interp/block_sizes.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <set>

#include "dialects/tile/tile_ops.h"

namespace kiln::interp {
namespace {

// The largest divisor of n that is at most limit.
int64_t largestDivisorAtMost(int64_t n, int64_t limit) {
  for (int64_t d = std::min(n, limit); d > 1; --d)
    if (n % d == 0) return d;
  return 1;
}

}  // namespace

bool chooseBlockSizes(const ir::Operation& program, const std::map<std::string, int64_t>& extents,
                      const std::map<std::string, int64_t>& overrides, std::map<std::string, int64_t>& blocks,
                      ir::DiagnosticEngine& diag) {
  std::set<std::string> tiled, spanned;
  std::map<std::string, int64_t> groupAlign;  // dim -> gcd of the aligns of the group_index ops on it
  std::map<std::string, int64_t> sliceOf;     // dim -> lcm of the block_k of the tile.dot_scaled ops along it
  program.walk([&](const ir::Operation& op) {
    if (op.is("tile.dot_scaled")) {
      const ir::Extent& k = op.operand(0)->type().shape()[1];
      if (k.isSymbolic()) {
        int64_t& s = sliceOf[k.sym];
        int64_t b = op.intAttr("block_k");
        // The lcm of the slices, saturated: no block size is a multiple of an overflowing one.
        int64_t step = s ? b / std::gcd(s, b) : b;
        s = s == 0 ? b : s > std::numeric_limits<int64_t>::max() / step ? std::numeric_limits<int64_t>::max() : s * step;
      }
    }
    if (op.is("tile.for_tiles"))
      for (const auto& d : op.stringsAttr("dims")) tiled.insert(d);
    if (op.is("tile.span")) spanned.insert(op.stringAttr("dim"));
    if (op.is("tile.group_index")) {
      std::string d = tile::coordDim(op.operand(1));
      int64_t& a = groupAlign[d];
      a = std::gcd(a, op.intAttr("align"));
    }
  });

  bool ok = true;
  for (const auto& [dim, v] : overrides) {
    if (!extents.count(dim)) {
      ok = diag.error(program.loc()) << "'" << dim << "' is not a dim of program '" << program.stringAttr("sym_name")
                                     << "'";
    } else if (v <= 0) {
      ok = diag.error(program.loc()) << "block size for dim '" << dim << "' must be positive, got " << v;
    } else if (spanned.count(dim) && extents.count(dim) && v != extents.at(dim)) {
      ok = diag.error(program.loc()) << "dim '" << dim << "' is spanned whole (tile.span), so its block is the whole dim ("
                                     << extents.at(dim) << "), not " << v;
    } else if (sliceOf.count(dim) && v % sliceOf[dim] != 0 && v < extents.at(dim)) {
      ok = diag.error(program.loc()) << "block size " << v << " for dim '" << dim << "' must be a multiple of "
                                     << sliceOf[dim] << ": tile.dot_scaled scales slices of " << sliceOf[dim]
                                     << " along it, and a slice may not straddle two blocks";
    } else if (groupAlign.count(dim) && groupAlign[dim] % v != 0) {
      ok = diag.error(program.loc()) << "block size " << v << " for dim '" << dim
                                     << "' must divide the tile.group_index align " << groupAlign[dim];
    }
  }
  if (!ok) return false;

  for (const auto& [dim, extent] : extents) {
    int64_t b = extent;
    if (auto o = overrides.find(dim); o != overrides.end()) {
      b = o->second;
    } else if (groupAlign.count(dim)) {
      b = largestDivisorAtMost(groupAlign[dim], kTileBlock);
    } else if (tiled.count(dim)) {
      b = kTileBlock;
    }
    // A block past the whole dim is all padding; a group dim shorter than its block is one chunk.
    blocks[dim] = std::min(b, extent);
  }
  return true;
}

}  // namespace kiln::interp
