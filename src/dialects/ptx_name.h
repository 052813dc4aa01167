#pragma once
// A kernel's sym_name becomes its PTX .entry name (and the stem of its .param names), so it must
// be a PTX identifier (PTX ISA, "Identifiers"): a letter, '_', '$' or '%' first, then letters,
// digits, '_' or '$', ASCII only. The length is capped well below what the assembler accepts, so
// a derived name (`NAME_param_12`) stays legal too.
#include <cstddef>
#include <string>
#include <string_view>

namespace kiln {

constexpr size_t kMaxPtxNameLength = 256;

// Why `name` cannot be a PTX identifier, as a sentence naming it (escaped, and shortened when
// long) and the rule it breaks; "" when it can.
std::string ptxNameProblem(std::string_view name);

}  // namespace kiln
