#include <catch2/catch.hpp>

#include "spec/lexer.h"

using namespace probekit::spec;

namespace {
std::vector<Token> lex(const std::string& s, Diagnostics& d) { return tokenize(s, "f.d", d); }
}  // namespace

TEST_CASE("lexer: identifiers, punctuation and locations") {
    Diagnostics d;
    auto t = lex("provider p {\n  probe a__b(int);\n};", d);
    REQUIRE_FALSE(d.has_errors());
    REQUIRE(t.size() == 12);
    CHECK(t[0].is(TokenKind::Ident, "provider"));
    CHECK(t[4].text == "a__b");
    CHECK(t[4].loc.line == 2);
    CHECK(t[4].loc.col == 9);
    CHECK(t.back().kind == TokenKind::End);
}

TEST_CASE("lexer: comments are dropped, doc comments kept") {
    Diagnostics d;
    auto t = lex("/* plain */ // line\n/** the doc */ probe", d);
    REQUIRE(t.size() == 3);
    CHECK(t[0].kind == TokenKind::DocComment);
    CHECK(t[0].text == " the doc ");
    CHECK(t[1].is(TokenKind::Ident, "probe"));
}

TEST_CASE("lexer: directives are whole logical lines, only at line start") {
    Diagnostics d;
    auto t = lex("#define X \\\n  unsigned int\n  # file: x.c\na # b", d);
    REQUIRE_FALSE(d.has_errors());
    REQUIRE(t[0].kind == TokenKind::Directive);
    CHECK(t[0].text == "define X    unsigned int");
    CHECK(t[1].kind == TokenKind::Directive);
    CHECK(t[1].text == " file: x.c");
    CHECK(t[2].is(TokenKind::Ident, "a"));
    CHECK(t[3].punct('#'));
}

TEST_CASE("lexer: cpp linemarkers move locations and are not tokens") {
    Diagnostics d;
    auto t = lex("# 1 \"x.d\"\n# 40 \"inc/y.h\" 1\nfoo\n", d);
    REQUIRE(t.size() == 2);
    CHECK(t[0].text == "foo");
    CHECK(t[0].loc.file == "inc/y.h");
    CHECK(t[0].loc.line == 40);
}

TEST_CASE("lexer: errors name the place") {
    Diagnostics d;
    lex("provider p {\n /* open", d);
    REQUIRE(d.has_errors());
    CHECK(d.all()[0].format() == "f.d:2:2: error: unterminated /* comment");

    Diagnostics d2;
    lex("probe \x01", d2);
    REQUIRE(d2.has_errors());
    CHECK(d2.all()[0].format() == "f.d:1:7: error: unexpected byte 0x01 in input");

    Diagnostics d3;
    lex("x = \"abc\n", d3);
    CHECK(d3.all()[0].message == "unterminated string literal");
}

TEST_CASE("lexer: CRLF, form feeds and non-ASCII in comments are tolerated") {
    Diagnostics d;
    auto t = lex("provider p {\r\n\f/* caf\xc3\xa9 */ };\r\n", d);
    REQUIRE_FALSE(d.has_errors());
    CHECK(t.size() == 6);
}
