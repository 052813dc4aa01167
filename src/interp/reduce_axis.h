#pragma once
// tile.reduce_axis on a tile's values (the rules are in kiln/interp/interpreter.h):
//  Exact      sum: an f32 accumulator, one f32 add per element in increasing position order,
//             starting from the first element; max / min: IEEE maximum / minimum in that order;
//             the result rounded once to the result's element type when that is narrower;
//  Reference  the same order in double, never rounded.
#include <string_view>
#include <vector>

#include "interp/runtime_values.h"

namespace kiln::interp {

// `x` reduced along `axis` with `kind` ("sum", "max", "min"); the result is row-major over x's
// other axes.
Tile reduceAxis(const Tile& x, size_t axis, std::string_view kind, ir::ScalarType resultElem, Arithmetic m);

}  // namespace kiln::interp
