// The kernel side of `probekit trace`: one uprobe perf event per site, per
// CPU and per thread that exists when we attach, through the uprobe PMU
// (with ref_ctr_offset, so gated probes open while we are attached and close
// when our file descriptors do, even if we are killed).
//
// Why per thread and per CPU: a perf event on a task follows one thread.
// `inherit` would give the threads it creates later a copy, but it cannot be
// used with the uprobe PMU: the kernel initialises each inherited copy
// again, reading the uprobe's path through attr.config1, a pointer into
// *our* memory, in the new thread's address space; that fails, and with it
// the target's clone(): pthread_create returns an error (seen on 6.18). So
// each thread gets events of its own, and threads started later are found
// by rescanning /proc/PID/task on every tick (follow_new_threads): hits of a
// new thread before its events open are missed. A per-task event cannot
// share a ring buffer with another task's unless both are bound to one CPU,
// so each thread gets one event per CPU, and all the events of one CPU
// write into that CPU's single ring buffer (PERF_EVENT_IOC_SET_OUTPUT): the
// number of ring buffers is the number of CPUs, the number of file
// descriptors sites x threads x CPUs (the soft RLIMIT_NOFILE is raised to
// the hard one). The other way, a per-CPU event for every process (pid -1)
// filtered by pid in user space, would put the breakpoint into every
// process that maps the file (a shared library: all of them), and make all
// of them pay for the trap.
//
// Counting (--count) opens one counting event per site and thread (cpu -1)
// and no ring buffer: nothing is sampled, so nothing can be lost.
#pragma once

#include <poll.h>
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "trace/decode.h"
#include "trace/plan.h"
#include "trace/ring_buffer.h"

namespace probekit::trace {

struct Hit {
    const TraceSite* site = nullptr;
    uint32_t pid = 0, tid = 0;
    uint64_t time_ns = 0;  // CLOCK_MONOTONIC
    HitContext ctx;
};

struct SessionOptions {
    bool sampling = true;       // false: count hits only (--count)
    size_t buffer_pages = 256;  // per CPU, a power of two (1 MiB with 4 KiB pages)
};

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
    // Opens events for the threads of the process that have none yet.
    bool follow_new_threads(std::string& error);
    void disable();

    // The ring buffers' descriptors, to poll for POLLIN.
    std::vector<pollfd> poll_fds() const;
    // Reads every record in every ring buffer.
    void drain(const std::function<void(const Hit&)>& on_hit, const std::function<void(uint64_t lost)>& on_lost);
    // Counting mode: hits per probe (index of TracePlan::probes), including
    // those of threads that have exited.
    std::vector<uint64_t> counts() const;
    size_t event_count() const { return events_.size(); }
    // Unmaps the ring buffers and closes the events: the uprobes go, and
    // with them the gates they held open.
    void close();

private:
    struct Event {
        int fd;
        size_t site;
    };
    pid_t pid_ = 0;
    const TracePlan* plan_ = nullptr;
    bool add_threads(const std::vector<pid_t>& tids, std::string& error);
    SessionOptions opt_;
    std::vector<int> cpus_;
    std::vector<int> ring_fd_;   // per CPU (as cpus_): the event whose ring the others write into
    std::vector<pid_t> tids_;    // sorted: every thread tried
    std::vector<Event> events_;
    std::vector<RingBuffer> rings_;
    std::unordered_map<uint64_t, size_t> site_of_id_;
};

}  // namespace probekit::trace
