#include "runtime/threads/proc_task.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <dirent.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace probekit::threads {

TaskDir::TaskDir() : fd_(::open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) {}

TaskDir::~TaskDir() {
    if (fd_ >= 0) ::close(fd_);
}

// Reads a small /proc file whole: openat/read/close, no stdio buffering.
bool TaskDir::read_small(pid_t tid, const char* leaf, char* buf, size_t len, size_t* got) const {
    char path[48];
    std::snprintf(path, sizeof path, "%d/%s", tid, leaf);
    const int fd = ::openat(fd_, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    const ssize_t n = ::read(fd, buf, len - 1);
    ::close(fd);
    if (n < 0) return false;
    buf[n] = '\0';
    *got = static_cast<size_t>(n);
    return true;
}

std::vector<pid_t> TaskDir::list() const {
    std::vector<pid_t> tids;
    if (fd_ < 0) return tids;
    // getdents64 on our own fd: opendir would take it over and close it.
    alignas(8) char buf[8192];
    for (;;) {
        const long n = ::syscall(SYS_getdents64, fd_, buf, sizeof buf);
        if (n <= 0) break;
        for (long off = 0; off < n;) {
            const auto* e = reinterpret_cast<const struct dirent64*>(buf + off);
            if (e->d_name[0] >= '0' && e->d_name[0] <= '9') tids.push_back(static_cast<pid_t>(std::atoi(e->d_name)));
            off += e->d_reclen;
        }
    }
    std::sort(tids.begin(), tids.end());
    return tids;
}

TaskInfo TaskDir::read_state(pid_t tid, int capture_signal) const {
    TaskInfo t;
    t.tid = tid;
    // stat alone has the name, the state and the blocked signal mask (field
    // 32): one open per thread, the largest part of a dump's cost, and stat
    // is cheaper for the kernel to render than status.
    char buf[1024];
    size_t n = 0;
    if (!read_small(tid, "stat", buf, sizeof buf, &n)) {
        t.gone = true;
        return t;
    }
    // "tid (comm) S ...": comm may hold spaces and parentheses; it ends at the last ')'.
    const char* open = std::strchr(buf, '(');
    const char* close = std::strrchr(buf, ')');
    if (open && close && close > open && close[1] == ' ') {
        t.comm.assign(open + 1, static_cast<size_t>(close - open - 1));
        t.state = close[2];
        const char* p = close + 2;
        for (int field = 3; field < 32 && p; ++field) {
            p = std::strchr(p, ' ');
            if (p) ++p;
        }
        if (p) t.blocks_signal = (std::strtoull(p, nullptr, 10) >> (capture_signal - 1)) & 1u;
    }
    return t;
}

bool read_cpu_time(TaskInfo& t) {
    // The thread's CPU clock (what pthread_getcpuclockid gives): nanoseconds,
    // where stat's utime/stime count ticks. Fails once the thread is gone.
    const clockid_t clock = static_cast<clockid_t>((~static_cast<unsigned>(t.tid) << 3) | 6);
    struct timespec ts {};
    if (::clock_gettime(clock, &ts) != 0) return false;
    t.cpu_ns = static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
    return true;
}

void TaskDir::read_details(TaskInfo& t) const {
    char buf[512];
    size_t n = 0;
    if (read_small(t.tid, "syscall", buf, sizeof buf, &n)) {
        // "running", or "NR arg0 ... sp pc"; "-1 sp pc" when not in a call.
        if (buf[0] >= '0' && buf[0] <= '9') {
            char* p = nullptr;
            t.syscall = std::strtol(buf, &p, 10);
            for (auto& a : t.syscall_args) a = std::strtoull(p, &p, 16);
        }
    }
    if (read_small(t.tid, "wchan", buf, sizeof buf, &n) && !(n == 1 && buf[0] == '0')) t.wchan.assign(buf, n);
    if (read_small(t.tid, "schedstat", buf, sizeof buf, &n)) {
        // "run_ns wait_ns timeslices"
        char* p = nullptr;
        std::strtoull(buf, &p, 10);
        std::strtoull(p, &p, 10);
        t.switches = std::strtoull(p, nullptr, 10);
    }
}

}  // namespace probekit::threads
