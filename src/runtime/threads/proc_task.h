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

// The thread ids in /proc/self/task, in ascending order.
std::vector<pid_t> list_tasks();
// Name, state, signal mask (status) and CPU time.
TaskInfo read_task_state(pid_t tid, int capture_signal);
// CPU time only; false when the thread is gone.
bool read_cpu_time(TaskInfo& info);
// Adds the blocked-call view: syscall, wchan, schedstat.
void read_task_details(TaskInfo& info);

// Name of system call nr on this architecture, or null (generated table).
const char* syscall_name(long nr);

}  // namespace probekit::threads
