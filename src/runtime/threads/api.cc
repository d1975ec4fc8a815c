// The C API's dump entry points.
#include <cerrno>
#include <cstring>
#include <unistd.h>

#include "runtime/threads/dump.h"

namespace probekit::threads {

DumpOptions options_from(const probekit_dump_options* o) {
    DumpOptions d;
    if (!o) return d;
    d.mode = o->mode == PROBEKIT_THREADS_INTERRUPT_ALL ? PROBEKIT_THREADS_INTERRUPT_ALL : PROBEKIT_THREADS_RUNNING;
    d.file_line = o->file_line != 0;
    if (o->timeout_ms > 0) d.timeout_ms = o->timeout_ms;
    return d;
}

std::string formatted(const Dump& d, int format) { return format == PROBEKIT_THREADS_JSON ? format_json(d) : d.text; }

bool write_all(int fd, std::string_view text) {
    while (!text.empty()) {
        const ssize_t n = ::write(fd, text.data(), text.size());
        if (n < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        text.remove_prefix(static_cast<size_t>(n));
    }
    return true;
}

}  // namespace probekit::threads

using namespace probekit::threads;

extern "C" {

const char* probekit_threads_strerror(int status) {
    switch (status) {
    case PROBEKIT_THREADS_E_BUSY: return "a dump cannot be taken from here (inside a dump or a libprobekit signal handler)";
    case PROBEKIT_THREADS_E_SYSTEM: return "a system call failed";
    case PROBEKIT_THREADS_E_TOO_SMALL: return "the buffer is too small for the dump";
    default: return probekit_strerror(status);
    }
}

int probekit_threads_dump(char* buf, size_t len, size_t* needed, const struct probekit_dump_options* opts) {
    if (!buf && len) return PROBEKIT_E_INVALID;
    int status = PROBEKIT_OK;
    auto d = take_dump(options_from(opts), &status);
    if (!d) return status;
    try {
        const std::string text = formatted(*d, opts ? opts->format : PROBEKIT_THREADS_TEXT);
        if (needed) *needed = text.size() + 1;
        if (text.size() + 1 > len) return PROBEKIT_THREADS_E_TOO_SMALL;
        std::memcpy(buf, text.c_str(), text.size() + 1);
        return PROBEKIT_OK;
    } catch (const std::bad_alloc&) {
        return PROBEKIT_E_NO_MEMORY;
    }
}

int probekit_threads_dump_fd(int fd, const struct probekit_dump_options* opts) {
    if (fd < 0) return PROBEKIT_E_INVALID;
    int status = PROBEKIT_OK;
    auto d = take_dump(options_from(opts), &status);
    if (!d) return status;
    try {
        if (!write_all(fd, formatted(*d, opts ? opts->format : PROBEKIT_THREADS_TEXT))) return PROBEKIT_THREADS_E_SYSTEM;
        return PROBEKIT_OK;
    } catch (const std::bad_alloc&) {
        return PROBEKIT_E_NO_MEMORY;
    }
}

}  // extern "C"
