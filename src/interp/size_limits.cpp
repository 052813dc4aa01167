// Size checks before allocation (see size_limits.h).
#include "interp/size_limits.h"

#include <fmt/format.h>

#include <cctype>
#include <optional>

#include "dialects/tile/tensor_layout.h"
#include "interp/tensor_extents.h"
#include "support/checked_math.h"

namespace kiln::interp {
namespace {

using support::checkedAdd;
using support::checkedMul;

constexpr int64_t kMaxMemorySetting = int64_t(1) << 62;

// "[M, K] = [65536, 65536]" for messages.
std::string shapeText(const ir::Type& t, const std::vector<int64_t>& extents) {
  std::string s = ir::shapeStr(t.shape()) + " = [";
  for (size_t i = 0; i < extents.size(); ++i) s += (i ? ", " : "") + std::to_string(extents[i]);
  return s + "]";
}

// "dim 'K' (65536)" or "extent 3 (123)": what made a product overflow.
std::string factorName(const ir::Extent& e, int64_t value, size_t axis) {
  return e.isSymbolic() ? fmt::format("dim '{}' ({})", e.sym, value) : fmt::format("extent {} ({})", axis, value);
}

// The element count of `shape` with these extents; on overflow, nullopt and `culprit` names the
// factor at which the product left int64.
std::optional<int64_t> elementCount(const ir::Shape& shape, const std::vector<int64_t>& extents, std::string& culprit) {
  int64_t n = 1;
  for (size_t a = 0; a < extents.size(); ++a) {
    auto next = checkedMul(n, extents[a]);
    if (!next) {
      culprit = factorName(shape[a], extents[a], a);
      return std::nullopt;
    }
    n = *next;
  }
  return n;
}

const char* kRaiseHint = "use smaller dims, or raise the limit with --max-memory (or KILN_INTERP_MAX_MEMORY)";

}  // namespace

std::string formatBytes(int64_t bytes) {
  const char* units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  // Exact below 1 MiB, so that a total just over a small limit never reads the same as the limit.
  if (bytes < (1 << 20)) return fmt::format("{} bytes", bytes);
  double v = static_cast<double>(bytes);
  int u = -1;
  while (v >= 1024 && u < 5) {
    v /= 1024;
    ++u;
  }
  return fmt::format("{:.1f} {}", v, units[u]);
}

std::optional<int64_t> parseMemorySize(const std::string& text) {
  size_t i = 0;
  int64_t n = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    auto next = checkedMul(n, 10);
    if (!next || !(next = checkedAdd(*next, text[i] - '0'))) return std::nullopt;
    n = *next;
    ++i;
  }
  if (i == 0) return std::nullopt;
  std::string unit = text.substr(i);
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (unit.size() > 1 && (unit.ends_with("IB") || unit.ends_with("B")))
    unit = unit.substr(0, unit.size() - (unit.ends_with("IB") ? 2 : 1));
  else if (unit == "B")
    unit.clear();
  int shift = unit.empty() ? 0 : unit == "K" ? 10 : unit == "M" ? 20 : unit == "G" ? 30 : unit == "T" ? 40 : -1;
  if (shift < 0) return std::nullopt;
  auto bytes = checkedMul(n, int64_t(1) << shift);
  if (!bytes || *bytes <= 0 || *bytes > kMaxMemorySetting) return std::nullopt;
  return bytes;
}

bool checkArgumentSizes(const ir::Operation& program, const std::map<std::string, int64_t>& dims, int64_t maxBytes,
                        ir::DiagnosticEngine& diag) {
  bool ok = true;
  int64_t total = 0, largestBytes = -1;
  bool totalOverflows = false;
  std::string largest;  // "'A' of shape [M, K] = [..], 10.0 TiB": what to shrink first
  for (const auto& op : program.body().operations()) {
    if (!op->is("tile.input") && !op->is("tile.output")) continue;
    const ir::Type& t = op->result()->type();
    auto logical = logicalExtents(t, dims);
    if (!logical) continue;
    auto extents = std::optional(storedExtents(t, *logical));  // what a block tensor stores
    std::string name = op->stringAttr("name"), culprit;
    auto elems = elementCount(t.shape(), *extents, culprit);
    if (elems && t.param("strides")) {
      // A strided tensor's storage is everything its strides reach, gaps included.
      auto dimValue = [&](const std::string& d) { return dims.count(d) ? dims.at(d) : int64_t(1); };
      elems = tile::spanElements(*extents, tile::elementStrides(t, dimValue));
      if (!elems) culprit = "its strides";
    }
    int64_t perElement = elementBytes(t.elem()) + kDoublesPerElementBytes;
    std::optional<int64_t> bytes = elems ? checkedMul(*elems, perElement) : std::nullopt;
    if (!elems || !bytes) {
      ok = diag.error(op->loc()) << "tensor '" << name << "' of shape " << shapeText(t, *extents)
                                 << (elems ? " needs more than 2^63 bytes"
                                           : " has more than 2^63 elements: the product overflows at " + culprit)
                                 << "; use smaller dims";
      continue;
    }
    if (*bytes > largestBytes) {
      largestBytes = *bytes;
      largest = "'" + name + "' of shape " + shapeText(t, *extents) + ", " + formatBytes(*bytes);
    }
    auto sum = checkedAdd(total, *bytes);
    totalOverflows = totalOverflows || !sum;
    if (sum) total = *sum;
  }
  if (!ok) return false;
  if (totalOverflows || total > maxBytes)
    return diag.error(program.loc()) << "program '" << program.stringAttr("sym_name") << "' at these dims needs "
                                     << (totalOverflows ? "more than 2^63 bytes" : formatBytes(total))
                                     << " of interpreter memory for its tensors (the largest is " << largest
                                     << "), over the limit of " << formatBytes(maxBytes) << "; " << kRaiseHint;
  return true;
}

bool checkTileSizes(const ir::Operation& program, const RunContext& ctx, int64_t maxBytes, ir::DiagnosticEngine& diag) {
  bool ok = true;
  program.walk([&](const ir::Operation& op) {
    if (!ok) return;
    if (op.is("tile.for_tiles")) {
      int64_t n = op.stringAttr("batch").empty() ? 1 : ctx.extents.at(op.stringAttr("batch"));
      for (const auto& d : op.stringsAttr("dims")) {
        auto next = checkedMul(n, support::ceilDiv(ctx.extents.at(d), ctx.blocks.at(d)));
        if (!next) {
          ok = diag.error(op.loc()) << "'tile.for_tiles' would run more than 2^63 tile instances (overflow at dim '" << d
                                    << "' = " << ctx.extents.at(d) << "); use smaller dims";
          return;
        }
        n = *next;
      }
    }
    for (size_t r = 0; r < op.numResults(); ++r) {
      const ir::Type& t = op.result(static_cast<unsigned>(r))->type();
      if (!t.isKind("tile")) continue;
      std::vector<int64_t> block;
      for (const auto& e : t.shape()) block.push_back(e.isSymbolic() ? ctx.blocks.at(e.sym) : e.value);
      std::string culprit;
      auto elems = elementCount(t.shape(), block, culprit);
      auto bytes = elems ? checkedMul(*elems, kDoublesPerElementBytes) : std::nullopt;
      if (bytes && *bytes <= maxBytes) continue;
      ok = diag.error(op.loc()) << "'" << op.name() << "' makes a tile of shape " << shapeText(t, block) << ", "
                                << (bytes ? "which needs " + formatBytes(*bytes) + " of interpreter memory, over the limit of " +
                                                formatBytes(maxBytes)
                                          : "whose size overflows at " + culprit)
                                << " (a dim that is not tiled is one whole-dim block); " << kRaiseHint;
      return;
    }
  });
  return ok;
}

}  // namespace kiln::interp
