// probekit thread dumps, C++ wrapper over threads.h (docs/threads.md).
#pragma once

#include <probekit/threads.h>

#include <stdexcept>
#include <string>

namespace probekit::threads {

struct options {
    probekit_threads_mode mode = PROBEKIT_THREADS_RUNNING;
    probekit_threads_format format = PROBEKIT_THREADS_TEXT;
    bool file_line = false;
    int timeout_ms = 0;  // 0: 200 ms
};

class error : public std::runtime_error {
public:
    explicit error(int status) : std::runtime_error(probekit_threads_strerror(status)), status_(status) {}
    int status() const noexcept { return status_; }

private:
    int status_;
};

// A dump of every thread, as text or JSON. Throws error (PROBEKIT_THREADS_E_BUSY
// from inside a dump or a libprobekit handler).
inline std::string dump(const options& o = {}) {
    const probekit_dump_options c{o.mode, o.format, o.file_line ? 1 : 0, o.timeout_ms};
    std::string out(64 * 1024, '\0');
    for (;;) {
        size_t needed = 0;
        const int r = probekit_threads_dump(out.data(), out.size(), &needed, &c);
        if (r == PROBEKIT_OK) {
            out.resize(needed - 1);
            return out;
        }
        if (r != PROBEKIT_THREADS_E_TOO_SMALL) throw error(r);
        out.resize(needed + needed / 4);  // the next dump may be a little longer
    }
}

// Registers the current thread for its lifetime in scope.
class registration {
public:
    explicit registration(const char* name = nullptr, probekit_thread_state_fn fn = nullptr, void* data = nullptr) {
        const int r = probekit_thread_register(name, fn, data);
        if (r != PROBEKIT_OK) throw error(r);
    }
    ~registration() { probekit_thread_unregister(); }
    registration(const registration&) = delete;
    registration& operator=(const registration&) = delete;
};

inline void progress() noexcept { probekit_thread_progress(); }

}  // namespace probekit::threads
