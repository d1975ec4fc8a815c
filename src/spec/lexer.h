// Tokenizer for DTrace-style provider files.
//
// Hand-written because no library covers this dialect: D source mixed with C
// preprocessor lines, `#` shell comments, cpp linemarkers (after -C), doc
// comments that must be kept, and arbitrary D clauses that are only skipped.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "spec/diagnostics.h"

namespace probekit::spec {

enum class TokenKind {
    Ident,
    Number,
    String,     // "..." (kept only so D clauses can be skipped)
    Char,       // '...'
    Punct,      // one character, or "->"
    Directive,  // a whole `#...` line, continuations joined, without the '#'
    DocComment, // the text of a /** ... */ comment
    End,
};

struct Token {
    TokenKind kind = TokenKind::End;
    std::string text;
    Location loc;
    bool is(TokenKind k, std::string_view t) const { return kind == k && text == t; }
    bool punct(char c) const { return kind == TokenKind::Punct && text.size() == 1 && text[0] == c; }
};

// Splits `source` into tokens. cpp linemarkers (`# 12 "file.d"`) are applied to
// the locations of the tokens that follow and are not returned. Lexical errors
// (unterminated comment or literal, a byte that cannot start a token) are
// reported to `diags` and end the token list.
std::vector<Token> tokenize(std::string_view source, const std::string& file, Diagnostics& diags);

}  // namespace probekit::spec
