#pragma once
// The generic text form. Every op prints as
//
//   %r0, %r1 = dialect.op(%a, %b) {key = value, ...} : type0, type1 {
//   ^bb0(%x: type, ...):
//     ...
//   }
//
// Operand types are not repeated (they are the types of the operand values). Attributes keep their
// order; an op with regions prints each region as a braced block after the result types. Values
// print with their name hint when it is unique in scope, otherwise by number. Printing the parse of
// printed text gives the same text, byte for byte.
#include <ostream>
#include <string>

#include "kiln/ir/operation.h"

namespace kiln::ir {

struct PrintOptions {
  bool locations = false;   // append loc("file":line:col) to each op
};

void print(const Operation& op, std::ostream& os, const PrintOptions& opts = {});
std::string toString(const Operation& op, const PrintOptions& opts = {});
std::string toString(const Module& m, const PrintOptions& opts = {});

}  // namespace kiln::ir
