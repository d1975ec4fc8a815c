// Small helpers for writing generated source text.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace probekit::codegen {

// A piece of text to be written inside a C string literal (escaped on the way).
struct CEscaped {
    std::string_view text;
};

// An output buffer written piece by piece: generated headers run to
// megabytes, and building each line from temporaries was most of the time.
// With a sink, full chunks go to it as they are made and memory stays small.
class Text {
public:
    using Sink = std::function<void(std::string_view)>;
    Text() = default;
    explicit Text(Sink sink) : sink_(std::move(sink)) { buf_.reserve(2 * kChunk); }

    template <class... Parts>
    void line(const Parts&... parts) {
        (put(parts), ...);
        buf_ += '\n';
        if (sink_ && buf_.size() >= kChunk) flush();
    }
    // Hands what is buffered to the sink (no-op without one).
    void flush() {
        if (!sink_) return;
        sink_(buf_);
        buf_.clear();
    }
    template <class... Parts>
    void raw(const Parts&... parts) {
        (put(parts), ...);
    }
    const std::string& str() const { return buf_; }
    std::string take() { return std::move(buf_); }

private:
    void put(std::string_view s) { buf_.append(s); }
    void put(char c) { buf_ += c; }
    void put(size_t n) { buf_ += std::to_string(n); }
    void put(CEscaped e);

    static constexpr size_t kChunk = 256 * 1024;
    Sink sink_;
    std::string buf_;
};

std::vector<std::string> split_lines(const std::string& s);
// Text that can sit inside a /* */ comment: "*/" is broken up.
std::string comment_safe(const std::string& s);
// Text that can sit inside a C string literal.
std::string c_escape(const std::string& s);
// A C string literal holding `s`, quotes included.
std::string c_string(const std::string& s);

}  // namespace probekit::codegen
