#pragma once
// A small PTX text builder: typed virtual registers with deterministic names, labels,
// instructions and comments, and the final assembly of a kernel's text.
//
// Registers are numbered per class in creation order (%r0, %r1, ... / %rd0 / %f0 / %h0 / %p0), labels
// likewise ($L0, $L1, ...), so the same sequence of calls always gives byte-identical text. The
// builder knows nothing about kern ops; emitters (emit_*.cpp) decide what to write.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::ptx {

enum class RegClass : uint8_t { Pred, B16, B32, B64, F32 };

struct Reg {
  RegClass cls = RegClass::B32;
  int id = -1;
  bool valid() const { return id >= 0; }
  std::string str() const;  // "%r3"
};

class PtxBuilder {
 public:
  Reg reg(RegClass c);
  std::string label();
  // One instruction; `text` without indentation or the trailing ';'.
  void inst(std::string_view text);
  // `@p text` / `@!p text`.
  void instIf(const Reg& pred, std::string_view text, bool negate = false);
  void comment(std::string_view text);
  void placeLabel(const std::string& l);
  void pragmaNounroll();

  // `.reg` declarations for every class used, then the body, each line tab-indented.
  std::string declarations() const;
  const std::string& body() const { return body_; }

 private:
  int counts_[5] = {0, 0, 0, 0, 0};
  int labels_ = 0;
  std::string body_;
};

// Text of a float immediate in PTX's exact hex form (0fXXXXXXXX).
std::string f32Immediate(double v);

}  // namespace kiln::ptx
