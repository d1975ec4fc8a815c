// The service thread: takes the dumps that cannot be taken where they are
// requested (a signal from another process, a signal handler, a fatal
// signal) and sends them to the sink or to `probekit threads`. It sits in
// read(2) on a pipe until a request arrives: no timer, no polling. It lives
// in its own file so it can move onto the runtime's agent thread.
#pragma once

#include <cstdint>
#include <string>
#include <sys/types.h>

namespace probekit::threads {

enum class RequestKind : uint32_t { sink = 1, cli = 2, panic = 3 };

struct Request {
    RequestKind kind;
    pid_t pid;      // cli: the requester (si_pid)
    uid_t uid;      // cli: its uid (si_uid)
    uint32_t value; // cli: the sigqueue value (nonce and flags, docs/threads.md)
};

// Starts the service thread once; later calls replace the sink.
int start_service(const char* sink_path);
// Async-signal-safe: queues a request. False when the service is not running
// or its pipe is full (the request is dropped: a dump is already coming).
bool post_request(const Request& r);

// The sink: stderr, or a new 0600 file per dump (O_EXCL|O_NOFOLLOW).
// Returns the fd to write to and to close (-1 on failure, message in *error).
int open_sink(uint64_t dump_number, bool* close_after, std::string* error);

// The name the service thread carries ("probekit-sig28"): how `probekit
// threads` finds that a process serves dumps, and on which signal.
inline constexpr const char* kServiceThreadPrefix = "probekit-sig";
// The abstract unix socket a `probekit threads` CLI listens on (shared with
// src/control/thread_dump_client.cc). Abstract namespace (leading NUL):
// nothing to clean up if either side dies.
inline std::string cli_socket_name(pid_t cli_pid, uint32_t nonce) {
    return std::string(1, '\0') + "probekit-threads." + std::to_string(cli_pid) + "." + std::to_string(nonce);
}
// sigqueue value: bits 0-1 format, bit 2 interrupt-all, bit 3 file:line,
// bits 4-31 the nonce.
inline constexpr uint32_t kCliJson = 1, kCliInterruptAll = 4, kCliFileLine = 8;

}  // namespace probekit::threads
