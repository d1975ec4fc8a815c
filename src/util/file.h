// Whole-file reads and all-or-nothing writes.
#pragma once

#include <optional>
#include <string>

namespace probekit::util {

// Reads a file; on failure returns nullopt and sets `error` to a message
// that names the file and the reason.
std::optional<std::string> read_file(const std::string& path, std::string& error);

// Writes `content` to `path` through a temporary file in the same directory
// and a rename, so a reader (or a failed run) never sees a partial file.
// "-" writes to standard output.
bool write_file_atomic(const std::string& path, const std::string& content, std::string& error);

}  // namespace probekit::util
