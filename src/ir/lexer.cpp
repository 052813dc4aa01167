#include "lexer.h"

#include <cctype>
#include <charconv>

namespace kiln::ir::detail {

std::string_view tokName(Tok t) {
  switch (t) {
    case Tok::Eof: return "end of input";
    case Tok::Error: return "invalid token";
    case Tok::Ident: return "identifier";
    case Tok::ValueId: return "value name";
    case Tok::BlockId: return "block label";
    case Tok::Int: return "integer";
    case Tok::Float: return "float";
    case Tok::String: return "string";
    case Tok::LParen: return "'('";
    case Tok::RParen: return "')'";
    case Tok::LBrace: return "'{'";
    case Tok::RBrace: return "'}'";
    case Tok::LBracket: return "'['";
    case Tok::RBracket: return "']'";
    case Tok::Less: return "'<'";
    case Tok::Greater: return "'>'";
    case Tok::Comma: return "','";
    case Tok::Colon: return "':'";
    case Tok::Equal: return "'='";
    case Tok::Minus: return "'-'";
  }
  return "token";
}

char Lexer::advance() {
  char c = peek();
  if (pos_ < src_.size()) ++pos_;
  if (c == '\n') {
    ++line_;
    col_ = 1;
  } else {
    ++col_;
  }
  return c;
}

void Lexer::skipSpaceAndComments() {
  for (;;) {
    char c = peek();
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      advance();
    } else if (c == '/' && peek(1) == '/') {
      while (pos_ < src_.size() && peek() != '\n') advance();
    } else {
      return;
    }
  }
}

static bool isIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
static bool isIdentChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '$';
}

Token Lexer::next() {
  skipSpaceAndComments();
  Token t;
  t.line = line_;
  t.col = col_;
  if (pos_ >= src_.size()) return t;
  char c = peek();
  auto single = [&](Tok k) {
    advance();
    t.kind = k;
    return t;
  };
  switch (c) {
    case '(': return single(Tok::LParen);
    case ')': return single(Tok::RParen);
    case '{': return single(Tok::LBrace);
    case '}': return single(Tok::RBrace);
    case '[': return single(Tok::LBracket);
    case ']': return single(Tok::RBracket);
    case '<': return single(Tok::Less);
    case '>': return single(Tok::Greater);
    case ',': return single(Tok::Comma);
    case ':': return single(Tok::Colon);
    case '=': return single(Tok::Equal);
    case '"': return lexString(t);
    default: break;
  }
  if (c == '-') {
    if (std::isdigit(static_cast<unsigned char>(peek(1)))) return lexNumber(t);
    return single(Tok::Minus);
  }
  if (std::isdigit(static_cast<unsigned char>(c))) return lexNumber(t);
  if (c == '%' || c == '^') {
    advance();
    t.kind = c == '%' ? Tok::ValueId : Tok::BlockId;
    while (isIdentChar(peek())) t.text += advance();
    if (t.text.empty()) {
      t.kind = Tok::Error;
      t.text = std::string("expected a name after '") + c + "'";
    }
    return t;
  }
  if (isIdentStart(c)) {
    t.kind = Tok::Ident;
    while (isIdentChar(peek())) t.text += advance();
    return t;
  }
  advance();
  t.kind = Tok::Error;
  if (std::isprint(static_cast<unsigned char>(c)))
    t.text = std::string("unexpected character '") + c + "'";
  else
    t.text = "unexpected byte " + std::to_string(static_cast<unsigned char>(c));
  return t;
}

Token Lexer::lexNumber(Token t) {
  size_t start = pos_;
  bool isFloat = false;
  if (peek() == '-') advance();
  while (std::isdigit(static_cast<unsigned char>(peek()))) advance();
  if (peek() == '.' && std::isdigit(static_cast<unsigned char>(peek(1)))) {
    isFloat = true;
    advance();
    while (std::isdigit(static_cast<unsigned char>(peek()))) advance();
  }
  if ((peek() == 'e' || peek() == 'E') &&
      (std::isdigit(static_cast<unsigned char>(peek(1))) ||
       ((peek(1) == '-' || peek(1) == '+') && std::isdigit(static_cast<unsigned char>(peek(2)))))) {
    isFloat = true;
    advance();
    if (peek() == '-' || peek() == '+') advance();
    while (std::isdigit(static_cast<unsigned char>(peek()))) advance();
  }
  std::string_view text = src_.substr(start, pos_ - start);
  t.text = std::string(text);
  const char* b = text.data();
  const char* e = b + text.size();
  if (isFloat) {
    t.kind = Tok::Float;
    auto [p, ec] = std::from_chars(b, e, t.floatValue);
    if (ec != std::errc() || p != e) {
      t.kind = Tok::Error;
      t.text = "float literal '" + t.text + "' is out of range";
    }
  } else {
    t.kind = Tok::Int;
    auto [p, ec] = std::from_chars(b, e, t.intValue);
    if (ec != std::errc() || p != e) {
      t.kind = Tok::Error;
      t.text = "integer literal '" + t.text + "' does not fit in 64 bits";
    }
  }
  return t;
}

Token Lexer::lexString(Token t) {
  advance();  // opening quote
  t.kind = Tok::String;
  for (;;) {
    if (pos_ >= src_.size() || peek() == '\n') {
      t.kind = Tok::Error;
      t.text = "unterminated string";
      return t;
    }
    char c = advance();
    if (c == '"') return t;
    if (c != '\\') {
      t.text += c;
      continue;
    }
    char e = advance();
    switch (e) {
      case '"': t.text += '"'; break;
      case '\\': t.text += '\\'; break;
      case 'n': t.text += '\n'; break;
      case 't': t.text += '\t'; break;
      default: {
        auto hex = [](char h) -> int {
          if (h >= '0' && h <= '9') return h - '0';
          if (h >= 'a' && h <= 'f') return h - 'a' + 10;
          if (h >= 'A' && h <= 'F') return h - 'A' + 10;
          return -1;
        };
        int hi = hex(e), lo = hex(peek());
        if (hi < 0 || lo < 0) {
          t.kind = Tok::Error;
          t.text = "invalid escape in string";
          return t;
        }
        advance();
        t.text += static_cast<char>(hi * 16 + lo);
      }
    }
  }
}

}  // namespace kiln::ir::detail
