// Recursive-descent parser for the generic text form (grammar in printer.h):
//
//   module  := op*
//   op      := [value-id (',' value-id)* '='] ident '(' [value-id (',' value-id)*] ')'
//              [attr-dict] [':' type (',' type)*] [loc] region*
//   region  := '{' ['^' ident '(' [value-id ':' type (',' ...)*] ')' ':'] op* '}'
//   attr-dict := '{' ident '=' attr (',' ident '=' attr)* '}'     (never empty)
//   type    := scalar | ident ['<' entry (',' entry)* '>']
//   entry   := scalar | '[' [extent (',' extent)*] ']' | ident '=' attr
//
// An attr-dict and a region both open with '{'; an attr-dict's first tokens are `ident =`.
// Values are scoped lexically: a region sees the values of the regions around it.
#include "kiln/ir/parser.h"

#include <cctype>
#include <limits>
#include <unordered_map>

#include "kiln/ir/op_registry.h"
#include "lexer.h"

namespace kiln::ir {
namespace {

using detail::Lexer;
using detail::Tok;
using detail::Token;

constexpr int kMaxDepth = 200;  // nesting of regions, arrays and types; deeper input is refused

class Parser {
 public:
  Parser(std::string_view text, DiagnosticEngine& diag, const ParseOptions& opts)
      : lex_(text), diag_(diag), opts_(opts) {
    tok_ = lex_.next();
    peek_ = lex_.next();
  }

  std::unique_ptr<Module> parseModule() {
    auto module = std::make_unique<Module>();
    scopes_.emplace_back();
    while (tok_.kind != Tok::Eof)
      if (!parseOp(module->body())) return nullptr;
    return module;
  }

 private:
  // ---- token helpers ----
  void consume() {
    tok_ = peek_;
    peek_ = lex_.next();
  }
  // The token after peek_: a copy of the lexer reads ahead without consuming.
  Token peekSecond() const {
    Lexer ahead = lex_;
    return ahead.next();
  }
  Location loc(const Token& t) const { return Location{opts_.filename, t.line, t.col}; }
  bool error(const Token& t, const std::string& msg) {
    if (!failed_) diag_.error(loc(t)) << msg;  // report the first error only: the rest is noise
    failed_ = true;
    return false;
  }
  bool expect(Tok k, std::string_view what) {
    if (tok_.kind == k) {
      consume();
      return true;
    }
    return unexpected(std::string("expected ") + std::string(detail::tokName(k)) + " " + std::string(what));
  }
  bool unexpected(const std::string& msg) {
    if (tok_.kind == Tok::Error) return error(tok_, tok_.text);
    std::string found = tok_.kind == Tok::Ident || tok_.kind == Tok::ValueId ? " '" + tok_.text + "'" : "";
    return error(tok_, msg + ", found " + std::string(detail::tokName(tok_.kind)) + found);
  }

  // ---- values ----
  Value* lookupValue(const std::string& name) {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto f = it->find(name);
      if (f != it->end()) return f->second;
    }
    return nullptr;
  }
  bool defineValue(const Token& t, Value* v) {
    if (lookupValue(t.text)) return error(t, "redefinition of value '%" + t.text + "'");
    scopes_.back()[t.text] = v;
    bool numeric = !t.text.empty() && std::isdigit(static_cast<unsigned char>(t.text[0]));
    if (!numeric) v->setNameHint(t.text);
    return true;
  }

  // ---- ops ----
  bool parseOp(Block& block) {
    std::vector<Token> resultNames;
    if (tok_.kind == Tok::ValueId) {
      for (;;) {
        if (tok_.kind != Tok::ValueId) return unexpected("expected a result name");
        resultNames.push_back(tok_);
        consume();
        if (tok_.kind != Tok::Comma) break;
        consume();
      }
      if (!expect(Tok::Equal, "after result names")) return false;
    }
    if (tok_.kind != Tok::Ident) return unexpected("expected an operation name");
    Token nameTok = tok_;
    consume();
    if (!opts_.allowUnregistered && !OpRegistry::get().lookup(nameTok.text))
      return error(nameTok, "unknown operation '" + nameTok.text + "'");
    if (!expect(Tok::LParen, "after the operation name")) return false;
    std::vector<Value*> operands;
    if (tok_.kind != Tok::RParen) {
      for (;;) {
        if (tok_.kind != Tok::ValueId) return unexpected("expected an operand");
        Value* v = lookupValue(tok_.text);
        if (!v) return error(tok_, "use of undefined value '%" + tok_.text + "'");
        operands.push_back(v);
        consume();
        if (tok_.kind != Tok::Comma) break;
        consume();
      }
    }
    if (!expect(Tok::RParen, "to close the operand list")) return false;

    std::vector<NamedAttr> attrs;
    if (tok_.kind == Tok::LBrace && peek_.kind == Tok::Ident && peekSecond().kind == Tok::Equal) {
      consume();
      for (;;) {
        if (tok_.kind != Tok::Ident) return unexpected("expected an attribute name");
        std::string key = tok_.text;
        Token keyTok = tok_;
        consume();
        for (const auto& a : attrs)
          if (a.name == key) return error(keyTok, "attribute '" + key + "' is given twice");
        if (!expect(Tok::Equal, "after the attribute name")) return false;
        Attribute value;
        if (!parseAttr(value, 0)) return false;
        attrs.push_back({key, std::move(value)});
        if (tok_.kind != Tok::Comma) break;
        consume();
      }
      if (!expect(Tok::RBrace, "to close the attributes")) return false;
    }

    std::vector<Type> resultTypes;
    if (tok_.kind == Tok::Colon) {
      consume();
      for (;;) {
        Type t;
        if (!parseType(t, 0)) return false;
        resultTypes.push_back(std::move(t));
        if (tok_.kind != Tok::Comma) break;
        consume();
      }
    }
    if (resultTypes.size() != resultNames.size())
      return error(nameTok, "'" + nameTok.text + "' has " + std::to_string(resultNames.size()) +
                                " result names but " + std::to_string(resultTypes.size()) + " result types");

    Location opLoc = loc(nameTok);
    if (tok_.kind == Tok::Ident && tok_.text == "loc" && peek_.kind == Tok::LParen) {
      consume();
      consume();
      if (tok_.kind != Tok::String) return unexpected("expected a file name string in loc(...)");
      opLoc.file = tok_.text;
      consume();
      uint32_t parts[2] = {0, 0};
      for (uint32_t& p : parts) {
        if (!expect(Tok::Colon, "in loc(...)")) return false;
        if (tok_.kind != Tok::Int || tok_.intValue < 0 || tok_.intValue > UINT32_MAX)
          return unexpected("expected a line or column number in loc(...)");
        p = static_cast<uint32_t>(tok_.intValue);
        consume();
      }
      opLoc.line = parts[0];
      opLoc.col = parts[1];
      if (!expect(Tok::RParen, "to close loc(...)")) return false;
    }

    // The op is built detached: its regions are parsed into it, and its results become visible
    // only after it (an op cannot use its own results).
    auto op = Operation::create(opLoc, nameTok.text, operands, resultTypes, attrs, 0);
    // An isolated op's regions see nothing from outside, so their names start afresh.
    bool isolated = op->info() && op->info()->has(kIsolated);
    std::vector<std::unordered_map<std::string, Value*>> outer;
    if (isolated) std::swap(outer, scopes_);
    while (tok_.kind == Tok::LBrace) {
      if (!parseRegion(op->addRegion())) return false;
    }
    if (isolated) std::swap(outer, scopes_);
    Operation* inserted = block.push_back(std::move(op));
    for (unsigned i = 0; i < resultNames.size(); ++i)
      if (!defineValue(resultNames[i], inserted->result(i))) return false;
    return true;
  }

  bool parseRegion(Region& region) {
    if (++depth_ > kMaxDepth) return error(tok_, "regions are nested too deeply");
    consume();  // '{'
    Block* block = region.addBlock();
    scopes_.emplace_back();
    if (tok_.kind == Tok::BlockId) {
      consume();
      if (!expect(Tok::LParen, "after the block label")) return false;
      if (tok_.kind != Tok::RParen) {
        for (;;) {
          if (tok_.kind != Tok::ValueId) return unexpected("expected a block argument");
          Token nameTok = tok_;
          consume();
          if (!expect(Tok::Colon, "after the block argument name")) return false;
          Type t;
          if (!parseType(t, 0)) return false;
          if (!defineValue(nameTok, block->addArgument(std::move(t)))) return false;
          if (tok_.kind != Tok::Comma) break;
          consume();
        }
      }
      if (!expect(Tok::RParen, "to close the block arguments")) return false;
      if (!expect(Tok::Colon, "after the block arguments")) return false;
    }
    while (tok_.kind != Tok::RBrace) {
      if (tok_.kind == Tok::Eof) return unexpected("expected '}' to close the region");
      if (!parseOp(*block)) return false;
    }
    consume();
    scopes_.pop_back();
    --depth_;
    return true;
  }

  // ---- attributes and types ----
  bool parseAttr(Attribute& out, int depth) {
    if (depth > kMaxDepth) return error(tok_, "attribute nesting is too deep");
    switch (tok_.kind) {
      case Tok::Int: out = Attribute(tok_.intValue); consume(); return true;
      case Tok::Float: out = Attribute(tok_.floatValue); consume(); return true;
      case Tok::String: out = Attribute(tok_.text); consume(); return true;
      case Tok::Minus:
        consume();
        if (tok_.kind == Tok::Ident && tok_.text == "inf") {
          consume();
          out = Attribute(-std::numeric_limits<double>::infinity());
          return true;
        }
        return unexpected("expected 'inf' after '-'");
      case Tok::Ident: {
        const std::string& s = tok_.text;
        if (s == "true" || s == "false") out = Attribute(s == "true");
        else if (s == "unit") out = Attribute();
        else if (s == "inf") out = Attribute(std::numeric_limits<double>::infinity());
        else if (s == "nan") out = Attribute(std::numeric_limits<double>::quiet_NaN());
        else return unexpected("expected an attribute value");
        consume();
        return true;
      }
      case Tok::LBracket: {
        consume();
        Attribute::Array elems;
        if (tok_.kind != Tok::RBracket) {
          for (;;) {
            Attribute e;
            if (!parseAttr(e, depth + 1)) return false;
            elems.push_back(std::move(e));
            if (tok_.kind != Tok::Comma) break;
            consume();
          }
        }
        if (!expect(Tok::RBracket, "to close the array")) return false;
        out = Attribute(std::move(elems));
        return true;
      }
      default:
        return unexpected("expected an attribute value");
    }
  }

  bool parseType(Type& out, int depth) {
    if (depth > kMaxDepth) return error(tok_, "type nesting is too deep");
    if (tok_.kind != Tok::Ident) return unexpected("expected a type");
    if (auto s = parseScalarName(tok_.text)) {
      out = Type::scalar(*s);
      consume();
      return true;
    }
    std::string kind = tok_.text;
    consume();
    if (tok_.kind != Tok::Less) {
      out = Type::make(kind, std::nullopt, std::nullopt);
      return true;
    }
    consume();
    std::optional<ScalarType> elem;
    std::optional<Shape> shape;
    std::vector<NamedAttr> params;
    for (;;) {
      if (tok_.kind == Tok::Ident && peek_.kind == Tok::Equal) {
        std::string key = tok_.text;
        consume();
        consume();
        Attribute v;
        if (!parseAttr(v, depth + 1)) return false;
        params.push_back({key, std::move(v)});
      } else if (tok_.kind == Tok::Ident) {
        auto s = parseScalarName(tok_.text);
        if (!s) return error(tok_, "'" + tok_.text + "' is not an element type (i1, i32, i64, index, f32, f16, bf16, f8e4m3, f8e5m2)");
        if (elem || shape || !params.empty()) return error(tok_, "the element type must come first in " + kind + "<...>");
        elem = s;
        consume();
      } else if (tok_.kind == Tok::LBracket) {
        if (shape) return error(tok_, "a type has at most one shape");
        consume();
        Shape sh;
        if (tok_.kind != Tok::RBracket) {
          for (;;) {
            if (tok_.kind == Tok::Int) sh.push_back(Extent::of(tok_.intValue));
            else if (tok_.kind == Tok::Ident) sh.push_back(Extent::of(tok_.text));
            else return unexpected("expected an extent (an integer or a dim name)");
            consume();
            if (tok_.kind != Tok::Comma) break;
            consume();
          }
        }
        if (!expect(Tok::RBracket, "to close the shape")) return false;
        shape = std::move(sh);
      } else {
        return unexpected("expected an element type, a shape or a parameter in " + kind + "<...>");
      }
      if (tok_.kind != Tok::Comma) break;
      consume();
    }
    if (!expect(Tok::Greater, "to close " + kind + "<...>")) return false;
    out = Type::make(kind, elem, shape, std::move(params));
    return true;
  }

  Lexer lex_;
  DiagnosticEngine& diag_;
  const ParseOptions& opts_;
  Token tok_, peek_;
  bool failed_ = false;
  std::vector<std::unordered_map<std::string, Value*>> scopes_;
  int depth_ = 0;
};

}  // namespace

std::unique_ptr<Module> parseModule(std::string_view text, DiagnosticEngine& diag, const ParseOptions& opts) {
  Parser p(text, diag, opts);
  return p.parseModule();
}

}  // namespace kiln::ir
