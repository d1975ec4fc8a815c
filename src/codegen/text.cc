#include "codegen/text.h"

#include <algorithm>
#include <array>
#include <cstdio>

namespace probekit::codegen {

std::vector<std::string> split_lines(const std::string& s) {
    std::vector<std::string> out;
    size_t start = 0;
    for (;;) {
        size_t end = s.find('\n', start);
        out.push_back(s.substr(start, end == std::string::npos ? std::string::npos : end - start));
        if (end == std::string::npos) break;
        start = end + 1;
    }
    return out;
}

std::string comment_safe(const std::string& s) {
    if (s.find("*/") == std::string::npos && s.find("/*") == std::string::npos) return s;
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
        out += s[i];
        if (s[i] == '*' && i + 1 < s.size() && s[i + 1] == '/') out += ' ';
        if (s[i] == '/' && i + 1 < s.size() && s[i + 1] == '*') out += ' ';
    }
    return out;
}

namespace {

// Bytes that stand for themselves in a C string literal.
constexpr auto kCPlain = [] {
    std::array<bool, 256> t{};
    for (int c = 0x20; c < 0x100; ++c) t[c] = c != 0x7f && c != '"' && c != '\\' && c != '?';
    return t;
}();

void c_escape_to(std::string& out, std::string_view s) {
    if (std::all_of(s.begin(), s.end(), [](unsigned char c) { return kCPlain[c]; })) {  // nearly always
        out.append(s);
        return;
    }
    for (unsigned char c : s) {
        if (c == '"' || c == '\\' || c == '?') {  // '?': no trigraphs in C11
            out += '\\';
            out += static_cast<char>(c);
        } else if (c < 0x20 || c == 0x7f) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\%03o", c);
            out += buf;
        } else {
            out += static_cast<char>(c);
        }
    }
}

}  // namespace

void Text::put(CEscaped e) { c_escape_to(buf_, e.text); }

std::string c_escape(const std::string& s) {
    std::string out;
    c_escape_to(out, s);
    return out;
}

std::string c_string(const std::string& s) {
    std::string out;
    out.reserve(s.size() + 2);
    out += '"';
    out += c_escape(s);
    out += '"';
    return out;
}

}  // namespace probekit::codegen
