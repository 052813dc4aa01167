#pragma once
// Tokens of the text form. Internal to the parser.
#include <cstdint>
#include <string>
#include <string_view>

namespace kiln::ir::detail {

enum class Tok {
  Eof, Error, Ident, ValueId /* %x */, BlockId /* ^bb0 */, Int, Float, String,
  LParen, RParen, LBrace, RBrace, LBracket, RBracket, Less, Greater, Comma, Colon, Equal, Minus,
};

struct Token {
  Tok kind = Tok::Eof;
  std::string text;  // identifier/name without sigil; decoded string; error message
  int64_t intValue = 0;
  double floatValue = 0;
  uint32_t line = 1, col = 1;
};

class Lexer {
 public:
  explicit Lexer(std::string_view src) : src_(src) {}
  Token next();

 private:
  char peek(size_t k = 0) const { return pos_ + k < src_.size() ? src_[pos_ + k] : '\0'; }
  char advance();
  void skipSpaceAndComments();
  Token lexNumber(Token t);
  Token lexString(Token t);
  std::string_view src_;
  size_t pos_ = 0;
  uint32_t line_ = 1, col_ = 1;
};

std::string_view tokName(Tok t);

}  // namespace kiln::ir::detail
