// A streaming JSON writer into a string. Hand-written rather than building a
// nlohmann::json tree because `probekit list -v --format json` writes every
// site of binaries with 200,000 of them, and a DOM costs several times the
// whole listing; this appends straight to one buffer.
#pragma once

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace probekit::util {

class JsonWriter {
public:
    explicit JsonWriter(std::string& out) : out_(out) {}

    JsonWriter& begin_object() { return open('{'); }
    JsonWriter& end_object() { return close('}'); }
    JsonWriter& begin_array() { return open('['); }
    JsonWriter& end_array() { return close(']'); }
    JsonWriter& key(std::string_view k) {
        comma();
        string_body(k);
        out_ += ':';
        after_key_ = true;
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
        out_ += b ? "true" : "false";
        return *this;
    }
    JsonWriter& value(int64_t v) {
        comma();
        char buf[24];
        out_.append(buf, static_cast<size_t>(std::to_chars(buf, buf + sizeof buf, v).ptr - buf));
        return *this;
    }
    JsonWriter& value(uint64_t v) {
        comma();
        char buf[24];
        out_.append(buf, static_cast<size_t>(std::to_chars(buf, buf + sizeof buf, v).ptr - buf));
        return *this;
    }
    JsonWriter& value(int v) { return value(static_cast<int64_t>(v)); }
    JsonWriter& value(unsigned v) { return value(static_cast<uint64_t>(v)); }
    JsonWriter& null() {
        comma();
        out_ += "null";
        return *this;
    }
    // A hex address as a string ("0x401136"): JSON numbers lose 64-bit precision in many readers.
    JsonWriter& address(uint64_t v) {
        comma();
        char buf[24] = {'"', '0', 'x'};
        char* end = std::to_chars(buf + 3, buf + sizeof buf - 1, v, 16).ptr;
        *end++ = '"';
        out_.append(buf, static_cast<size_t>(end - buf));
        return *this;
    }

private:
    JsonWriter& open(char c) {
        comma();
        out_ += c;
        first_.push_back(true);
        return *this;
    }
    JsonWriter& close(char c) {
        out_ += c;
        first_.pop_back();
        return *this;
    }
    void comma() {
        if (after_key_) {
            after_key_ = false;
            return;
        }
        if (!first_.empty()) {
            if (!first_.back()) out_ += ',';
            first_.back() = false;
        }
    }
    void string_body(std::string_view s) {
        out_ += '"';
        size_t run = 0;  // start of the current run of characters needing no escape
        for (size_t i = 0; i < s.size(); ++i) {
            const auto c = static_cast<unsigned char>(s[i]);
            if (c >= 0x20 && c != '"' && c != '\\') continue;
            out_.append(s.data() + run, i - run);
            run = i + 1;
            if (c == '"' || c == '\\') {
                out_ += '\\';
                out_ += static_cast<char>(c);
            } else {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\u%04x", c);
                out_ += buf;
            }
        }
        out_.append(s.data() + run, s.size() - run);
        out_ += '"';
    }

    std::string& out_;
    std::vector<bool> first_;
    bool after_key_ = false;
};

}  // namespace probekit::util
