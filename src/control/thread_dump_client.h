// `probekit threads PID`: asks a live process that uses libprobekit's thread
// dumps for one (docs/threads.md, "Asking from outside").
#pragma once

#include <string>
#include <sys/types.h>

namespace probekit::control {

struct ThreadDumpRequest {
    pid_t pid = 0;
    bool json = false;
    bool interrupt_all = false;
    bool file_line = false;
    int timeout_ms = 5000;
};

// The dump's text, or "" with *error set (no such process, the process does
// not serve thread dumps, permission, no answer in time).
std::string request_thread_dump(const ThreadDumpRequest& request, std::string* error);

}  // namespace probekit::control
