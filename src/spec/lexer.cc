#include "spec/lexer.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

namespace probekit::spec {
namespace {

// ASCII only, as C identifiers; inline rather than <cctype>'s locale-aware calls.
bool ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool ident_char(char c) { return ident_start(c) || (c >= '0' && c <= '9'); }

class Lexer {
public:
    Lexer(std::string_view src, const std::string& file, Diagnostics& diags)
        : src_(src), file_(file), diags_(diags) {}

    std::vector<Token> run() {
        std::vector<Token> out;
        out.reserve(src_.size() / 6);  // about one token per 6 bytes of spec text
        bool at_line_start = true;
        while (pos_ < src_.size()) {
            char c = src_[pos_];
            if (c == '\n') {
                advance();
                at_line_start = true;
                continue;
            }
            if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
                advance();
                continue;
            }
            Location loc = here();
            if (c == '#' && at_line_start) {
                std::string text = directive_text();
                if (!apply_linemarker(text)) out.push_back({TokenKind::Directive, std::move(text), loc});
                continue;
            }
            at_line_start = false;
            if (c == '/' && peek(1) == '*') {
                bool doc = peek(2) == '*' && peek(3) != '/';
                std::string body;
                if (!block_comment(body)) {
                    diags_.error(loc, "unterminated /* comment");
                    break;
                }
                if (doc) out.push_back({TokenKind::DocComment, body.substr(1), loc});
                continue;
            }
            if (c == '/' && peek(1) == '/') {
                pos_ = std::min(src_.find('\n', pos_), src_.size());
                continue;
            }
            if (ident_start(c)) {
                size_t start = pos_;
                while (pos_ < src_.size() && ident_char(src_[pos_])) ++pos_;
                out.push_back(Token{TokenKind::Ident, std::string(src_.substr(start, pos_ - start)), std::move(loc)});
                continue;
            }
            if (std::isdigit(static_cast<unsigned char>(c))) {
                size_t start = pos_;
                while (pos_ < src_.size() && (ident_char(src_[pos_]) || src_[pos_] == '.')) ++pos_;
                out.push_back({TokenKind::Number, std::string(src_.substr(start, pos_ - start)), loc});
                continue;
            }
            if (c == '"' || c == '\'') {
                std::string text;
                if (!quoted(c, text)) {
                    diags_.error(loc, c == '"' ? "unterminated string literal" : "unterminated character literal");
                    break;
                }
                out.push_back({c == '"' ? TokenKind::String : TokenKind::Char, std::move(text), loc});
                continue;
            }
            if (c == '-' && peek(1) == '>') {
                advance();
                advance();
                out.push_back({TokenKind::Punct, "->", loc});
                continue;
            }
            if (std::ispunct(static_cast<unsigned char>(c))) {
                advance();
                out.push_back(Token{TokenKind::Punct, std::string(1, c), std::move(loc)});
                continue;
            }
            char buf[64];
            std::snprintf(buf, sizeof buf, "unexpected byte 0x%02x in input", static_cast<unsigned char>(c));
            diags_.error(loc, buf);
            break;
        }
        out.push_back({TokenKind::End, "", here()});
        return out;
    }

private:
    char peek(size_t ahead) const { return pos_ + ahead < src_.size() ? src_[pos_ + ahead] : '\0'; }

    void advance() {
        if (src_[pos_] == '\n') {
            ++line_;
            line_start_ = pos_ + 1;
        }
        ++pos_;
    }

    // Columns count bytes from the start of the line, as compilers do.
    Location here() const { return {file_, line_, static_cast<uint32_t>(pos_ - line_start_ + 1)}; }

    // Reads from '#' to the end of the logical line (backslash-newline joins).
    std::string directive_text() {
        advance();  // '#'
        std::string text;
        while (pos_ < src_.size() && src_[pos_] != '\n') {
            if (src_[pos_] == '\\' && (peek(1) == '\n' || (peek(1) == '\r' && peek(2) == '\n'))) {
                advance();
                if (src_[pos_] == '\r') advance();
                advance();
                text += ' ';
                continue;
            }
            if (src_[pos_] == '/' && peek(1) == '*') {
                // A comment inside a directive line may span lines; it reads as a space.
                std::string ignored;
                if (!block_comment(ignored)) {
                    diags_.error(here(), "unterminated /* comment");
                    return text;
                }
                text += ' ';
                continue;
            }
            text += src_[pos_];
            advance();
        }
        while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) text.pop_back();
        return text;
    }

    // cpp output carries `# LINE "FILE" FLAGS...`; the next line is LINE of FILE.
    bool apply_linemarker(const std::string& text) {
        size_t i = 0;
        while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
        if (text.compare(i, 4, "line") == 0) i += 4;
        while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
        if (i >= text.size() || !std::isdigit(static_cast<unsigned char>(text[i]))) return false;
        unsigned long line = 0;
        while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
            line = line * 10 + static_cast<unsigned>(text[i] - '0');
            if (line > 0xffffffffUL) return false;
            ++i;
        }
        while (i < text.size() && text[i] == ' ') ++i;
        if (i < text.size() && text[i] == '"') {
            size_t end = text.find('"', i + 1);
            if (end != std::string::npos) file_ = text.substr(i + 1, end - i - 1);
        }
        // The newline that ends the marker is still ahead and will add one.
        line_ = static_cast<uint32_t>(line) - 1;
        return true;
    }

    bool block_comment(std::string& body) {
        const size_t start = pos_ + 2;
        const size_t end = src_.find("*/", start);
        const size_t stop = end == std::string_view::npos ? src_.size() : end;
        body.assign(src_.substr(start, stop - start));
        for (size_t i = body.find('\n'); i != std::string::npos; i = body.find('\n', i + 1)) {
            ++line_;
            line_start_ = start + i + 1;
        }
        pos_ = end == std::string_view::npos ? src_.size() : end + 2;
        return end != std::string_view::npos;
    }

    bool quoted(char q, std::string& text) {
        advance();
        while (pos_ < src_.size() && src_[pos_] != '\n') {
            char c = src_[pos_];
            if (c == '\\' && pos_ + 1 < src_.size()) {
                text += c;
                advance();
                text += src_[pos_];
                advance();
                continue;
            }
            advance();
            if (c == q) return true;
            text += c;
        }
        return false;
    }

    std::string_view src_;
    FileName file_;
    Diagnostics& diags_;
    size_t pos_ = 0;
    uint32_t line_ = 1;
    size_t line_start_ = 0;
};

}  // namespace

std::vector<Token> tokenize(std::string_view source, const std::string& file, Diagnostics& diags) {
    return Lexer(source, file, diags).run();
}

}  // namespace probekit::spec
