// A streaming JSON writer. Hand-written rather than building a
// nlohmann::json tree because `probekit list -v --format json` writes every
// site of binaries with 200,000 of them, and a DOM costs several times the
// whole listing; this appends straight into an OutBuffer (which can stream
// to stdout as it fills).
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "util/out_buffer.h"

namespace probekit::util {

class JsonWriter {
public:
    explicit JsonWriter(OutBuffer& out) : out_(out) {}

    JsonWriter& begin_object() { return open('{'); }
    JsonWriter& end_object() { return close('}'); }
    JsonWriter& begin_array() { return open('['); }
    JsonWriter& end_array() { return close(']'); }
    // A key written as a literal: ours never need escaping, so it is copied
    // as is (keys are a third of a site listing's tokens).
    template <size_t N>
    JsonWriter& key(const char (&k)[N]) {
        comma();
        char* p = out_.reserve(N + 2);
        *p++ = '"';
        std::memcpy(p, k, N - 1);
        p += N - 1;
        *p++ = '"';
        *p++ = ':';
        out_.commit(p);
        need_comma_ = false;
        return *this;
    }
    JsonWriter& key(std::string_view k) {
        comma();
        string_body(k);
        out_.put(':');
        need_comma_ = false;  // the value follows the key directly
        return *this;
    }
    JsonWriter& value(std::string_view s) {
        comma();
        string_body(s);
        return *this;
    }
    JsonWriter& value(const char* s) { return value(std::string_view(s)); }
    JsonWriter& value(bool b) {
        comma();
        out_.append(b ? std::string_view("true") : std::string_view("false"));
        return *this;
    }
    JsonWriter& value(int64_t v) {
        comma();
        char* p = out_.reserve(24);
        out_.commit(std::to_chars(p, p + 24, v).ptr);
        return *this;
    }
    JsonWriter& value(uint64_t v) {
        comma();
        char* p = out_.reserve(24);
        out_.commit(std::to_chars(p, p + 24, v).ptr);
        return *this;
    }
    JsonWriter& value(int v) { return value(static_cast<int64_t>(v)); }
    JsonWriter& value(unsigned v) { return value(static_cast<uint64_t>(v)); }
    JsonWriter& null() {
        comma();
        out_.append("null", 4);
        return *this;
    }
    // A hex address as a string ("0x401136"): JSON numbers lose 64-bit precision in many readers.
    JsonWriter& address(uint64_t v) {
        comma();
        char* p = out_.reserve(24);
        p[0] = '"', p[1] = '0', p[2] = 'x';
        char* end = std::to_chars(p + 3, p + 23, v, 16).ptr;
        *end++ = '"';
        out_.commit(end);
        return *this;
    }

    // One value written by the caller, straight into the buffer (already
    // valid JSON: a fragment rendered once and repeated, a hand-assembled
    // object): the writer puts the comma before it.
    OutBuffer& raw_value() {
        comma();
        return out_;
    }
    JsonWriter& raw_value(std::string_view json) {
        comma();
        out_.append(json);
        return *this;
    }

private:
    JsonWriter& open(char c) {
        comma();
        out_.put(c);
        need_comma_ = false;
        return *this;
    }
    JsonWriter& close(char c) {
        out_.put(c);
        need_comma_ = true;
        return *this;
    }
    // A value follows another value (or a closed container) at the same
    // level exactly when the previous token was one: no per-level stack needed.
    void comma() {
        if (need_comma_) out_.put(',');
        need_comma_ = true;
    }
    void string_body(std::string_view s) {
        out_.put('"');
        size_t run = 0;  // start of the current run of characters needing no escape
        for (size_t i = 0; i < s.size(); ++i) {
            const auto c = static_cast<unsigned char>(s[i]);
            if (c >= 0x20 && c != '"' && c != '\\') continue;
            out_.append(s.data() + run, i - run);
            run = i + 1;
            if (c == '"' || c == '\\') {
                const char esc[2] = {'\\', static_cast<char>(c)};
                out_.append(esc, 2);
            } else {
                static const char hex[] = "0123456789abcdef";
                const char esc[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
                out_.append(esc, 6);
            }
        }
        out_.append(s.data() + run, s.size() - run);
        out_.put('"');
    }

    OutBuffer& out_;
    bool need_comma_ = false;
};

}  // namespace probekit::util
