#include "trace/event_format.h"

#include <charconv>
#include <cstring>

namespace probekit::trace {
namespace {

// The number after `key` ("offset:") in a field line.
bool field_number(std::string_view line, std::string_view key, uint32_t& out) {
    const size_t at = line.find(key);
    if (at == std::string_view::npos) return false;
    const char* p = line.data() + at + key.size();
    return std::from_chars(p, line.data() + line.size(), out).ec == std::errc();
}

}  // namespace

std::optional<std::vector<EventField>> parse_event_format(std::string_view text, std::string& error) {
    std::vector<EventField> fields;
    size_t pos = 0, line_no = 0;
    while (pos < text.size()) {
        const size_t eol = std::min(text.find('\n', pos), text.size());
        const std::string_view line = text.substr(pos, eol - pos);
        pos = eol + 1;
        ++line_no;
        // "\tfield:__data_loc char[] s0;\toffset:16;\tsize:4;\tsigned:1;"
        const size_t f = line.find("field:");
        if (f == std::string_view::npos) continue;
        const size_t semi = line.find(';', f);
        EventField ef;
        if (semi == std::string_view::npos || !field_number(line, "offset:", ef.offset) ||
            !field_number(line, "size:", ef.size)) {
            error = "line " + std::to_string(line_no) + ": unreadable field: " + std::string(line);
            return std::nullopt;
        }
        std::string_view decl = line.substr(f + 6, semi - f - 6);
        ef.data_loc = decl.starts_with("__data_loc");
        if (const size_t br = decl.find('['); br != std::string_view::npos && !ef.data_loc) decl = decl.substr(0, br);
        while (!decl.empty() && (decl.back() == ']' || decl.back() == '[' || decl.back() == ' ')) decl.remove_suffix(1);
        const size_t sp = decl.find_last_of(" *");
        ef.name = std::string(sp == std::string_view::npos ? decl : decl.substr(sp + 1));
        fields.push_back(std::move(ef));
    }
    return fields;
}

std::optional<std::string_view> data_loc_string(std::span<const unsigned char> raw, uint32_t offset) {
    uint32_t loc = 0;
    if (offset + sizeof loc > raw.size()) return std::nullopt;
    std::memcpy(&loc, raw.data() + offset, sizeof loc);
    const uint32_t len = loc >> 16, at = loc & 0xffff;
    if (len == 0 || at + len > raw.size()) return std::nullopt;
    const char* s = reinterpret_cast<const char*>(raw.data() + at);
    // The length counts the NUL the kernel stored (or put in place of the
    // last byte of a string it had to cut).
    return std::string_view(s, strnlen(s, len));
}

}  // namespace probekit::trace
