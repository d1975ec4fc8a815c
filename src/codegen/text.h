// Small helpers for writing generated source text.
#pragma once

#include <string>
#include <vector>

namespace probekit::codegen {

class Text {
public:
    void line(const std::string& s) {
        buf_ += s;
        buf_ += '\n';
    }
    void raw(const std::string& s) { buf_ += s; }
    const std::string& str() const { return buf_; }

private:
    std::string buf_;
};

std::vector<std::string> split_lines(const std::string& s);
// Text that can sit inside a /* */ comment: "*/" is broken up.
std::string comment_safe(const std::string& s);
// Text that can sit inside a C string literal.
std::string c_escape(const std::string& s);

}  // namespace probekit::codegen
