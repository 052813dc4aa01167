// PtxBuilder (contract in ptx_builder.h).
#include "codegen/ptx/ptx_builder.h"

#include <bit>

#include <fmt/format.h>

namespace kiln::ptx {

static const char* prefix(RegClass c) {
  switch (c) {
    case RegClass::Pred: return "%p";
    case RegClass::B16: return "%h";
    case RegClass::B32: return "%r";
    case RegClass::B64: return "%rd";
    case RegClass::F32: return "%f";
  }
  return "%?";
}

static const char* declType(RegClass c) {
  switch (c) {
    case RegClass::Pred: return ".pred";
    case RegClass::B16: return ".b16";
    case RegClass::B32: return ".b32";
    case RegClass::B64: return ".b64";
    case RegClass::F32: return ".f32";
  }
  return "?";
}

std::string Reg::str() const { return prefix(cls) + std::to_string(id); }

Reg PtxBuilder::reg(RegClass c) { return Reg{c, counts_[int(c)]++}; }

std::string PtxBuilder::label() { return "$L" + std::to_string(labels_++); }

void PtxBuilder::inst(std::string_view text) {
  body_ += '\t';
  body_ += text;
  body_ += ";\n";
}

void PtxBuilder::instIf(const Reg& pred, std::string_view text, bool negate) {
  body_ += fmt::format("\t@{}{} {};\n", negate ? "!" : "", pred.str(), text);
}

void PtxBuilder::comment(std::string_view text) {
  body_ += "\t// ";
  for (char c : text) body_ += (c == '\n' || c == '\r') ? ' ' : c;
  body_ += '\n';
}

void PtxBuilder::placeLabel(const std::string& l) { body_ += l + ":\n"; }

void PtxBuilder::pragmaNounroll() { body_ += "\t.pragma \"nounroll\";\n"; }

std::string PtxBuilder::declarations() const {
  std::string s;
  for (RegClass c : {RegClass::Pred, RegClass::B16, RegClass::B32, RegClass::B64, RegClass::F32})
    if (counts_[int(c)] > 0) s += fmt::format("\t.reg {} {}<{}>;\n", declType(c), prefix(c), counts_[int(c)]);
  return s;
}

std::string f32Immediate(double v) {
  float f = static_cast<float>(v);
  return fmt::format("0f{:08X}", std::bit_cast<uint32_t>(f));
}

}  // namespace kiln::ptx
