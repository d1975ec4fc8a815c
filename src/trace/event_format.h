// The layout of a trace event's record, from its tracefs `format` file, and
// the string fields (`__data_loc char[]`) read out of a PERF_SAMPLE_RAW
// record laid out that way.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace probekit::trace {

struct EventField {
    std::string name;
    uint32_t offset = 0, size = 0;
    bool data_loc = false;  // `__data_loc`: a u32 (length << 16 | offset) pointing into the record
};

// The fields of a `format` file's "format:" section, in order. nullopt with
// `error` when a field line cannot be read.
std::optional<std::vector<EventField>> parse_event_format(std::string_view text, std::string& error);

// The string a `__data_loc char[]` field at `offset` points to in `raw`,
// without its NUL. nullopt when the kernel could not fetch it (length 0:
// an unreadable address, or longer than the kernel's 4095-byte limit) or the
// location falls outside the record.
std::optional<std::string_view> data_loc_string(std::span<const unsigned char> raw, uint32_t offset);

}  // namespace probekit::trace
