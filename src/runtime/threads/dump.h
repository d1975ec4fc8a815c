// Taking a dump: signal, wait (bounded), unwind, list the rest from /proc.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/threads/proc_task.h"
#include "runtime/threads/unwind.h"

namespace probekit::threads {

// How a thread's stack was (or was not) obtained.
enum class Capture {
    captured,       // signalled, answered, unwound
    not_signalled,  // blocked in the kernel and the mode signals running threads only
    unregistered,   // never called probekit_thread_register: no slot to capture into
    signal_blocked, // its signal mask blocks the capture signal: not signalled
    no_answer,      // signalled, no answer within the bound
    stopped,        // stopped (SIGSTOP, ptrace): not signalled, it could not answer
    exited,         // exited during the dump
    busy,           // its slot is still being written by a late answer to an earlier dump
};
const char* capture_name(Capture c);

struct ThreadReport {
    TaskInfo task;
    std::string name;  // registered name, else the kernel's
    bool registered = false;
    bool requester = false;
    Capture capture = Capture::unregistered;
    uint64_t answered_ns = 0;  // monotonic time the handler finished, captured threads only
    std::vector<Frame> frames;
    std::string note;
    std::string app_state;  // from the state callback
    std::string stuck;      // why it looks stuck, "" if it does not
};

struct DumpOptions {
    int mode = 0;  // probekit_threads_mode
    bool file_line = false;
    int timeout_ms = 200;
    bool operator==(const DumpOptions&) const = default;
};

struct Dump {
    uint64_t number = 0;  // 1, 2, ... in this process
    int pid = 0;
    DumpOptions options;
    uint64_t started_ns = 0;  // CLOCK_MONOTONIC
    uint64_t elapsed_ns = 0;
    std::string error;        // set when libdw could not be used: stacks are missing
    std::string header;       // a first line (the panic's signal and address), or ""
    std::vector<ThreadReport> threads;
    std::string text;         // formatted once, for text requests and publish_dump
};

// Takes a dump, or joins the one in progress with the same options.
// Returns null with *status set when refused (PROBEKIT_THREADS_E_BUSY).
std::shared_ptr<const Dump> take_dump(const DumpOptions& options, int* status);

// The panic path (panic.cc): a dump whose first thread is `first`, already
// captured into its slot by the fatal handler, with `header` on top.
std::shared_ptr<const Dump> take_panic_dump(pid_t first, const std::string& header);

// True while the calling thread takes a dump (state callbacks and thread_dump
// probe callbacks run then): requests from there are refused.
bool dump_in_progress_here();

// Every finished dump goes out through here exactly once: the runtime's
// `thread_dump` probe (probes/probekit.d) fires with the text and the number
// of threads, so stap and bpftrace scripts can collect dumps.
void publish_dump(const std::string& text, int nthreads);

std::string format_text(const Dump& dump);
std::string format_json(const Dump& dump);

}  // namespace probekit::threads

namespace probekit::threads {
// api.cc: the C options, a dump in the requested format, write(2) it all.
DumpOptions options_from(const probekit_dump_options* o);
std::string formatted(const Dump& d, int format);
bool write_all(int fd, std::string_view text);
}  // namespace probekit::threads
