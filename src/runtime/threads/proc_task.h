// What the kernel says about each thread of this process (/proc/self/task):
// the view of threads that are not signalled, or never registered.
#pragma once

#include <cstdint>
#include <string>
#include <sys/types.h>
#include <vector>

namespace probekit::threads {

struct TaskInfo {
    pid_t tid = 0;
    std::string comm;     // the kernel's thread name
    char state = '?';     // R S D T t Z X
    uint64_t cpu_ns = 0;  // CPU time (the thread's CPU clock)
    uint64_t switches = 0;  // times it was scheduled (schedstat), for "no progress"
    long syscall = -1;    // blocked in this system call; -1 when running or unknown
    uint64_t syscall_args[3] = {};
    std::string wchan;    // the kernel function it waits in; "" when running
    bool blocks_signal = false;  // SigBlk has the capture signal
    bool gone = false;    // the thread exited while we read it
};

// /proc/self/task, open for the length of one dump: each thread's files are
// opened relative to it ("T/stat"), which spares the kernel the walk through
// /proc and the "self" link for every file (a dump opens 70 or more).
class TaskDir {
public:
    TaskDir();
    ~TaskDir();
    TaskDir(const TaskDir&) = delete;
    TaskDir& operator=(const TaskDir&) = delete;

    // The thread ids, in ascending order; empty if the directory cannot be read.
    std::vector<pid_t> list() const;
    // Name, state and signal mask, from stat alone. The CPU time is read later
    // (read_cpu_time), once per dump.
    TaskInfo read_state(pid_t tid, int capture_signal) const;
    // Adds the blocked-call view: syscall, wchan, schedstat.
    void read_details(TaskInfo& info) const;

private:
    bool read_small(pid_t tid, const char* leaf, char* buf, size_t len, size_t* got) const;
    int fd_ = -1;
};

// CPU time only (the thread's CPU clock); false when the thread is gone.
bool read_cpu_time(TaskInfo& info);

// Name of system call nr on this architecture, or null (generated table).
const char* syscall_name(long nr);

}  // namespace probekit::threads
