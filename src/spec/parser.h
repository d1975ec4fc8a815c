// Parser for provider files: `provider`, `probe`, typedefs, `#define` type
// aliases and `#pragma D` lines. Other D constructs (clauses, translators,
// inline and extern declarations, struct bodies) are recognised and skipped.
#pragma once

#include <string_view>

#include "spec/ast.h"
#include "spec/diagnostics.h"
#include "spec/lexer.h"
#include "spec/types.h"

namespace probekit::spec {

struct ParseResult {
    Spec spec;
    AliasTable aliases;  // every alias declared in the file, for type resolution
};

// Parses `tokens`. Syntax errors are reported to `diags`; the result is then
// incomplete and must not be used for output.
ParseResult parse(const std::vector<Token>& tokens, const std::string& path, Diagnostics& diags);

// Parses a type followed by an optional declarator name from a token slice;
// used for `#define` bodies. Returns false when the slice is not exactly that.
bool parse_type_text(std::string_view text, TypeSpec& out);

}  // namespace probekit::spec
