// Whole-file reads and all-or-nothing writes.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace probekit::util {

// Reads a file; on failure returns nullopt and sets `error` to a message
// that names the file and the reason.
std::optional<std::string> read_file(const std::string& path, std::string& error);

// Writes `content` to `path` through a temporary file in the same directory
// and a rename, so a reader (or a failed run) never sees a partial file.
// "-" writes to standard output.
bool write_file_atomic(const std::string& path, const std::string& content, std::string& error);

// The same, written in pieces: output that runs to megabytes goes to the file
// as it is made instead of being held whole in memory. Nothing appears at
// `path` unless commit() succeeds; destroying an uncommitted file removes it.
class AtomicFile {
public:
    AtomicFile() = default;
    AtomicFile(const AtomicFile&) = delete;
    AtomicFile& operator=(const AtomicFile&) = delete;
    ~AtomicFile();

    bool open(const std::string& path, std::string& error);
    // Failures are remembered and reported by commit().
    void write(std::string_view data);
    bool commit(std::string& error);

private:
    void discard();

    std::string path_, tmp_;
    int fd_ = -1;
    int errno_ = 0;
};

}  // namespace probekit::util
