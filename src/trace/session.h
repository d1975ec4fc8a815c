// The kernel side of `probekit trace`: one uprobe perf event per site, per
// CPU and per thread that exists when we attach, through the uprobe PMU
// (with ref_ctr_offset, so gated probes open while we are attached and close
// when our file descriptors do, even if we are killed).
//
// Why per thread and per CPU: a perf event on a task follows one thread;
// `inherit` makes the threads it creates later carry a copy, but the kernel
// refuses to mmap an inherited event that is not bound to a CPU. So each
// existing thread gets one event per CPU, and all the events of one CPU
// write into that CPU's single ring buffer (PERF_EVENT_IOC_SET_OUTPUT): the
// number of ring buffers is the number of CPUs, the number of file
// descriptors sites x threads x CPUs (the soft RLIMIT_NOFILE is raised to
// the hard one). `inherit_thread` keeps fork()ed children out. The other
// way, a per-CPU event for every process (pid -1) filtered by pid in user
// space, would put the breakpoint into every process that maps the file (a
// shared library: all of them), and make all of them pay for the trap.
//
// Counting (--count) opens one counting event per site and thread (cpu -1,
// inherited) and no ring buffer: nothing is sampled, so nothing can be lost.
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
    // The threads of the process that got events of their own.
    const std::vector<pid_t>& threads() const { return tids_; }
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
    bool filter_pid_ = false;  // inherit_thread unsupported: children are dropped here
    std::vector<pid_t> tids_;
    std::vector<Event> events_;
    std::vector<RingBuffer> rings_;
    std::unordered_map<uint64_t, size_t> site_of_id_;
};

}  // namespace probekit::trace
