#include "spec/parser.h"

#include <cctype>

namespace probekit::spec {
namespace {

bool is_aggregate_word(const std::string& w) { return w == "struct" || w == "union" || w == "enum"; }

std::string describe(const Token& t) {
    switch (t.kind) {
        case TokenKind::End: return "end of file";
        case TokenKind::String: return "a string literal";
        case TokenKind::Char: return "a character literal";
        default: return "'" + t.text + "'";
    }
}

// Turns the body of a /** ... */ comment into plain text: leading '*' and
// indentation go, blank lines at either end go.
std::string clean_doc(const std::string& raw) {
    std::vector<std::string> lines;
    size_t start = 0;
    while (start <= raw.size()) {
        size_t end = raw.find('\n', start);
        if (end == std::string::npos) end = raw.size();
        std::string line = raw.substr(start, end - start);
        size_t i = 0;
        while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
        while (i < line.size() && line[i] == '*') ++i;
        if (i < line.size() && line[i] == ' ') ++i;
        line = line.substr(i);
        while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
        lines.push_back(line);
        start = end + 1;
    }
    while (!lines.empty() && lines.front().empty()) lines.erase(lines.begin());
    while (!lines.empty() && lines.back().empty()) lines.pop_back();
    std::string out;
    for (const auto& l : lines) out += (out.empty() ? "" : "\n") + l;
    return out;
}

class Parser {
public:
    Parser(const std::vector<Token>& toks, Diagnostics& diags) : toks_(toks), diags_(diags) {}

    void run(ParseResult& out) {
        out_ = &out;
        for (;;) {
            const Token& t = peek();
            if (t.kind == TokenKind::End) break;
            if (t.is(TokenKind::Ident, "provider")) parse_provider();
            else if (t.is(TokenKind::Ident, "typedef")) parse_typedef();
            else if (t.punct(';')) next();
            else if (t.kind == TokenKind::Ident &&
                     (is_aggregate_word(t.text) || t.text == "extern" || t.text == "inline" || t.text == "translator"))
                skip_declaration();
            else skip_clause();
        }
    }

    // Entry for #define bodies: a type and an optional name, nothing else.
    bool type_only(TypeSpec& out) {
        try {
            std::string name;
            Location name_loc;
            if (peek().kind != TokenKind::Ident) return false;
            parse_type(out, &name, &name_loc, false);
            return peek().kind == TokenKind::End && name.empty();
        } catch (const ParseAbort&) {
            return false;
        }
    }

private:
    // ---- token access: directives and doc comments are handled on the way ----
    const Token& peek() {
        skip_trivia();
        return toks_[pos_];
    }
    const Token& peek_after() {
        skip_trivia();
        size_t i = pos_ + 1;
        while (i < toks_.size() && (toks_[i].kind == TokenKind::Directive || toks_[i].kind == TokenKind::DocComment)) ++i;
        return toks_[i < toks_.size() ? i : toks_.size() - 1];
    }
    const Token& next() {
        skip_trivia();
        const Token& t = toks_[pos_];
        if (t.kind != TokenKind::End) ++pos_;
        doc_.clear();
        return t;
    }
    void skip_trivia() {
        while (pos_ < toks_.size()) {
            const Token& t = toks_[pos_];
            if (t.kind == TokenKind::DocComment) doc_ = t.text;
            else if (t.kind == TokenKind::Directive) directive(t);
            else break;
            ++pos_;
        }
    }

    [[noreturn]] void fail(const Location& loc, const std::string& msg) {
        diags_.error(loc, msg);
        throw ParseAbort{};
    }
    // `context` (a callable giving the words after "expected 'c' ") is only
    // called on failure: this runs for every probe of large specs.
    template <class Context>
    void expect_punct(char c, const Context& context) {
        const Token& t = peek();
        if (!t.punct(c)) fail(t.loc, std::string("expected '") + c + "' " + context() + ", found " + describe(t));
        next();
    }

    // ---- directives ----
    void directive(const Token& t) {
        std::string_view text = t.text;
        size_t i = 0;
        while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
        size_t w = i;
        while (i < text.size() && (std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '_')) ++i;
        std::string word(text.substr(w, i - w));
        std::string_view rest = text.substr(i);
        if (word == "pragma") {
            std::string body(rest);
            size_t b = body.find_first_not_of(" \t");
            body = b == std::string::npos ? "" : body.substr(b);
            if (body.rfind("D", 0) == 0 && (body.size() == 1 || body[1] == ' ' || body[1] == '\t'))
                out_->spec.pragmas.push_back({body, t.loc});
        } else if (word == "if" || word == "ifdef" || word == "ifndef") {
            if (!warned_conditional_) {
                diags_.warning(t.loc, "'#" + word + "' is not evaluated without -C: every branch is read and #define lines inside are ignored (pass -C to run the C preprocessor)");
                warned_conditional_ = true;
            }
            ++cond_depth_;
        } else if (word == "endif") {
            if (cond_depth_ > 0) --cond_depth_;
        } else if (word == "define" && cond_depth_ == 0) {
            define(rest);
        } else if (word == "undef" && cond_depth_ == 0) {
            size_t b = rest.find_first_not_of(" \t");
            if (b != std::string_view::npos) {
                size_t e = b;
                while (e < rest.size() && (std::isalnum(static_cast<unsigned char>(rest[e])) || rest[e] == '_')) ++e;
                out_->aliases.erase(std::string(rest.substr(b, e - b)));
            }
        }
        // Everything else (#include, #else, #error, `# file:` comments) is read
        // as a comment, as SystemTap's dtrace does without -C.
    }

    void define(std::string_view rest) {
        size_t b = rest.find_first_not_of(" \t");
        if (b == std::string_view::npos) return;
        size_t e = b;
        while (e < rest.size() && (std::isalnum(static_cast<unsigned char>(rest[e])) || rest[e] == '_')) ++e;
        if (e == b) return;
        std::string name(rest.substr(b, e - b));
        if (e < rest.size() && rest[e] == '(') return;  // function-like: not a type alias
        TypeSpec spec;
        if (parse_type_text(rest.substr(e), spec)) out_->aliases[name] = spec;
        else out_->aliases.erase(name);
    }

    // ---- declarations ----
    std::string ident(std::string_view what) {
        const Token& t = peek();
        if (t.kind != TokenKind::Ident) fail(t.loc, "expected " + std::string(what) + ", found " + describe(t));
        std::string name = t.text;
        next();
        const Token& after = toks_[pos_];
        if (after.kind == TokenKind::Punct && (after.text == "-" || after.text == "." || after.text == "$") &&
            after.loc.line == t.loc.line && after.loc.col == t.loc.col + name.size()) {
            fail(t.loc, "bad identifier starting '" + name + after.text + "': " + std::string(what) +
                            "s are made of letters, digits and '_' (write '__' where consumers should show '-')");
        }
        return name;
    }

    void parse_provider() {
        Location loc = peek().loc;
        next();
        Provider prov;
        prov.loc = loc;
        prov.name = ident("provider name");
        expect_punct('{', [&] { return "after 'provider " + prov.name + "'"; });
        for (;;) {
            const Token& t = peek();
            if (t.punct('}')) break;
            if (t.punct(';')) {
                next();
                continue;
            }
            if (t.is(TokenKind::Ident, "probe")) {
                prov.probes.push_back(parse_probe());
                continue;
            }
            if (t.kind == TokenKind::End) fail(prov.loc, "provider '" + prov.name + "' is not closed: missing '}'");
            fail(t.loc, "expected 'probe' or '}' in provider '" + prov.name + "', found " + describe(t));
        }
        next();
        if (peek().punct(';')) next();
        out_->spec.providers.push_back(std::move(prov));
    }

    Probe parse_probe() {
        Probe p;
        skip_trivia();
        p.doc = clean_doc(doc_);
        p.loc = peek().loc;
        next();
        p.name = ident("probe name");
        expect_punct('(', [&] { return "after probe name '" + p.name + "'"; });
        p.args = parse_params(p.name);
        if (peek().punct(':')) {
            next();
            expect_punct('(', [&] { return "to open the translated argument list of '" + p.name + "'"; });
            p.translated = parse_params(p.name);
            p.has_translated = true;
        }
        const Token& t = peek();
        if (!t.punct(';')) fail(t.loc, "expected ';' after the declaration of probe '" + p.name + "', found " + describe(t));
        next();
        return p;
    }

    std::vector<Arg> parse_params(const std::string& probe) {
        std::vector<Arg> args;
        if (peek().punct(')')) {
            next();
            return args;
        }
        if (peek().is(TokenKind::Ident, "void") && peek_after().punct(')')) {
            next();
            next();
            return args;
        }
        for (;;) {
            Arg a;
            a.loc = peek().loc;
            if (peek().kind != TokenKind::Ident)
                fail(a.loc, "expected an argument type in probe '" + probe + "', found " + describe(peek()));
            Location name_loc;
            parse_type(a.type, &a.name, &name_loc, false);
            const Token& t = peek();
            if (t.punct('['))
                fail(t.loc, "array arguments are not supported in probe '" + probe + "': pass a pointer");
            if (t.punct('('))
                fail(t.loc, "function-pointer arguments are not supported in probe '" + probe + "': pass 'void *'");
            args.push_back(std::move(a));
            if (peek().punct(',')) {
                next();
                continue;
            }
            if (peek().punct(')')) {
                next();
                return args;
            }
            const Token& bad = peek();
            if (bad.kind == TokenKind::End || bad.punct(';') || bad.punct('}'))
                fail(bad.loc, "missing ')' to close the arguments of probe '" + probe + "'");
            fail(bad.loc, "expected ',' or ')' in the arguments of probe '" + probe + "', found " + describe(bad));
        }
    }

    // type := (qualifier | builtin-word | aggregate tag [body] | typedef-name)+ '*'* [name]
    // An identifier is the type's name only until a base type has been seen;
    // after that it is the declarator name (C's rule for `unsigned value`).
    void parse_type(TypeSpec& t, std::string* name, Location* name_loc, bool allow_body) {
        t.loc = peek().loc;
        bool seen_base = false;
        for (;;) {
            const Token& tok = peek();
            if (tok.kind == TokenKind::Ident) {
                if (is_qualifier_word(tok.text)) {
                    t.words.push_back(tok.text);
                    next();
                    continue;
                }
                if (t.pointers > 0) break;
                if (is_aggregate_word(tok.text) && !seen_base) {
                    t.words.push_back(tok.text);
                    next();
                    if (peek().kind == TokenKind::Ident) t.tag = next().text;
                    if (peek().punct('{')) {
                        if (!allow_body) fail(peek().loc, "a " + t.words.back() + " body cannot appear in an argument list");
                        skip_braces();
                    } else if (t.tag.empty()) {
                        fail(peek().loc, "expected a tag after '" + t.words.back() + "', found " + describe(peek()));
                    }
                    seen_base = true;
                    continue;
                }
                if (is_builtin_type_word(tok.text)) {
                    t.words.push_back(tok.text);
                    next();
                    seen_base = true;
                    continue;
                }
                if (!seen_base) {
                    t.words.push_back(tok.text);
                    next();
                    seen_base = true;
                    continue;
                }
                break;
            }
            if (tok.punct('*')) {
                ++t.pointers;
                next();
                continue;
            }
            break;
        }
        if (!seen_base) fail(t.loc, "expected a type, found " + describe(peek()));
        if (peek().kind == TokenKind::Ident && name) {
            *name_loc = peek().loc;
            *name = next().text;
        }
    }

    void parse_typedef() {
        next();
        TypeSpec base;
        std::string name;
        Location name_loc;
        parse_type(base, &name, &name_loc, true);
        for (;;) {
            if (name.empty()) fail(peek().loc, "expected a name for the typedef, found " + describe(peek()));
            out_->aliases[name] = base;
            if (!peek().punct(',')) break;
            next();
            TypeSpec decl = base;
            decl.pointers = 0;
            while (peek().punct('*')) {
                ++decl.pointers;
                next();
            }
            name.clear();
            if (peek().kind == TokenKind::Ident) name = next().text;
            base = decl;
        }
        if (peek().punct('[')) skip_to_semicolon();
        expect_punct(';', [] { return std::string("after typedef"); });
    }

    void skip_braces() {
        Location open = peek().loc;
        int depth = 0;
        for (;;) {
            const Token& t = peek();
            if (t.kind == TokenKind::End) fail(open, "'{' is not closed");
            next();
            if (t.punct('{')) ++depth;
            else if (t.punct('}') && --depth == 0) return;
        }
    }

    void skip_to_semicolon() {
        Location start = peek().loc;
        for (;;) {
            const Token& t = peek();
            if (t.kind == TokenKind::End) fail(start, "declaration is not ended by ';'");
            if (t.punct(';')) return;
            if (t.punct('{')) skip_braces();
            else next();
        }
    }

    // struct/union/enum definitions, extern and inline declarations, translators.
    void skip_declaration() {
        skip_to_semicolon();
        next();
    }

    // A D probe clause (`dtrace:helper:ustack: /pred/ { ... }`) is skipped whole.
    // Anything that ends with ';' before any '{' is not D, and is an error.
    void skip_clause() {
        const Token& first = peek();
        Location start = first.loc;
        std::string what = describe(first);
        for (;;) {
            const Token& t = peek();
            if (t.kind == TokenKind::End || t.punct(';') || t.punct('}'))
                fail(start, "unexpected " + what + " at top level: expected 'provider', 'typedef' or a D declaration");
            if (t.punct('{')) {
                skip_braces();
                return;
            }
            next();
        }
    }

    const std::vector<Token>& toks_;
    Diagnostics& diags_;
    ParseResult* out_ = nullptr;
    size_t pos_ = 0;
    std::string doc_;
    int cond_depth_ = 0;
    bool warned_conditional_ = false;
};

}  // namespace

ParseResult parse(const std::vector<Token>& tokens, const std::string& path, Diagnostics& diags) {
    ParseResult out;
    out.spec.path = path;
    Parser p(tokens, diags);
    try {
        p.run(out);
    } catch (const ParseAbort&) {
    }
    return out;
}

bool parse_type_text(std::string_view text, TypeSpec& out) {
    Diagnostics scratch;
    auto toks = tokenize(text, "", scratch);
    if (scratch.has_errors()) return false;
    for (const auto& t : toks)
        if (t.kind == TokenKind::Directive || t.kind == TokenKind::DocComment) return false;
    Parser p(toks, scratch);
    return p.type_only(out) && !scratch.has_errors();
}

}  // namespace probekit::spec
