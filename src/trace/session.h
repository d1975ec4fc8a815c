// The kernel side of `probekit trace`: per site and per thread of the
// target, one perf event on the site's uprobe, with ref_ctr_offset so that
// gated probes open while we are attached and close when our file
// descriptors do, even if we are killed.
//
// The uprobe is a tracefs uprobe event (uprobe_events.h) when tracefs can be
// used: one uprobe consumer per site shared by all our perf events, and
// string arguments copied by the kernel at the hit. Otherwise each perf
// event is a uprobe of its own through the uprobe PMU (a consumer per event,
// strings read from the process when the hit is printed); Session says so
// in note().
//
// Why per thread with cpu -1: a perf event on a task follows one thread;
// `inherit` would cover threads created later, but with the uprobe PMU the
// kernel re-reads the uprobe's path through attr.config1, a pointer into
// *our* memory, in the new thread (clone fails), so new threads are found
// by rescanning /proc/PID/task on every tick (follow_new_threads): hits of a
// new thread before its events open are missed. One event per thread (not
// per thread and CPU) covers the thread wherever it runs from the moment it
// is open: the gate opens (the kernel installs the uprobe and bumps the
// semaphore) inside the first perf_event_open of a site, and that thread's
// hits are recorded from the end of that same call, whatever CPU it moves
// to. A per-task event can share a ring buffer only with events of the same
// task, so each thread has its own ring, owned by a dummy software event so
// that the site events can be closed (stop) before the ring is read for the
// last time: the gates close while every hit before is still in the rings.
// The other way, a per-CPU event for every process (pid -1) filtered by
// pid in user space, would put the breakpoint into every process that maps
// the file (a shared library: all of them), and make all of them pay.
//
// Counting (--count) opens one event per site and thread and no ring
// buffer: nothing is sampled, so nothing can be lost. With tracefs events a
// BPF program on each site counts the hits (bpf_counter.h); otherwise the
// events count them themselves.
#pragma once

#include <poll.h>
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "trace/bpf_counter.h"
#include "trace/decode.h"
#include "trace/plan.h"
#include "trace/ring_buffer.h"
#include "trace/uprobe_events.h"

namespace probekit::trace {

struct Hit {
    const TraceSite* site = nullptr;
    uint32_t pid = 0, tid = 0;
    uint64_t time_ns = 0;  // CLOCK_MONOTONIC
    HitContext ctx;
};

struct SessionOptions {
    bool sampling = true;      // false: count hits only (--count)
    size_t buffer_pages = 0;   // per thread, a power of two; 0: default_buffer_pages()
    bool tracefs = true;       // false: the uprobe PMU only
};

// Ring pages per thread when not given: 256 (1 MiB) for up to 16 threads,
// then less, so that a process with many threads does not pin gigabytes
// (16 MiB in all, at least 16 pages a thread).
size_t default_buffer_pages(size_t threads);

// The threads of `pid` (from /proc/PID/task).
std::vector<pid_t> list_threads(pid_t pid);

class Session {
public:
    Session() = default;
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;
    ~Session();

    // Opens the events of every site of `plan` for each of `tids` (threads
    // of process `pid`), sampling (or counting) at once. On failure, `error` says why (with the
    // missing capability for EACCES/EPERM); what was opened is closed.
    bool attach(pid_t pid, const std::vector<pid_t>& tids, const TracePlan& plan, const SessionOptions& opt,
                std::string& error);
    // What the operator should know about how the session attached (the
    // uprobe PMU fallback and why, stale events deleted); empty if nothing.
    const std::string& note() const { return note_; }
    // Opens events for the threads of the process that have none yet;
    // threads that have exited are closed at the next drain.
    bool follow_new_threads(std::string& error);

    // The ring buffers' descriptors, to poll for POLLIN.
    std::vector<pollfd> poll_fds() const;
    // Reads every record in every ring buffer.
    void drain(const std::function<void(const Hit&)>& on_hit, const std::function<void(uint64_t lost)>& on_lost);
    size_t event_count() const;
    // Closes the site events (the uprobes go, and with them the gates they
    // held open) and returns the hits per probe (index of TracePlan::probes)
    // they counted, sampled or not, including those of threads that have
    // exited. The rings stay readable until close().
    std::vector<uint64_t> stop();
    // Unmaps the ring buffers, closes everything and deletes the tracefs
    // events.
    void close();

private:
    struct Thread {
        pid_t tid = 0;
        int ring_fd = -1;          // the dummy event owning the ring (sampling)
        std::vector<int> site_fd;  // per site, -1 when not open
        std::unique_ptr<RingBuffer> ring;
        bool exited = false;       // gone from /proc: closed after its ring is drained
    };
    bool add_threads(const std::vector<pid_t>& tids, std::string& error);
    int open_site_event(const Thread& t, size_t site, std::string& error);
    void count_and_close(Thread& t);
    // Counts and closes its site events, then unmaps and closes its ring.
    void release(Thread& t);

    pid_t pid_ = 0;
    const TracePlan* plan_ = nullptr;
    SessionOptions opt_;
    UprobeEvents kernel_;
    BpfCounter bpf_;
    std::vector<int> bpf_holder_;  // per site (with bpf_): a dup of the event its program is attached to
    std::string note_;
    std::vector<Thread> threads_;
    std::vector<pid_t> tried_;   // sorted: every thread tried, so that none is tried twice
    std::vector<uint64_t> closed_counts_;  // per probe, from events already closed
    std::unordered_map<uint64_t, size_t> site_of_id_;
};

}  // namespace probekit::trace
