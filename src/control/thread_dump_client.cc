// The CLI side of the channel. The process runs a service thread named
// "probekit-sigN" (N: its capture signal): finding it in /proc/PID/task is
// how we know, before sending anything, that the process serves dumps and on
// which signal (sending a signal a process does not handle could kill it).
// We listen on an abstract unix socket named after our pid and a random
// nonce, send the signal to the service thread with the nonce and flags as
// its value (send_request), and
// accept one connection, from the target pid (SO_PEERCRED), which writes the
// dump and closes. The process checks our socket's credentials in turn.
#include "control/thread_dump_client.h"
#include "runtime/threads/service.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <poll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>
#include <vector>

namespace probekit::control {
namespace {

using probekit::threads::kCliFileLine;
using probekit::threads::kCliInterruptAll;
using probekit::threads::kCliJson;
using probekit::threads::kServiceThreadPrefix;

// The process's service thread.
struct Service {
    int signal = 0;  // its capture signal; 0: the process has no service thread
    pid_t tid = 0;
    bool takes_signal = false;  // it does not block the signal (older libprobekit blocks all)
};

// 0, or -1 (with errno) if the process's task list cannot be read.
int find_service(pid_t pid, Service* out) {
    const std::string dir = "/proc/" + std::to_string(pid) + "/task";
    const int dfd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) return -1;
    std::vector<pid_t> tids;
    alignas(8) char buf[8192];
    long n;
    while ((n = syscall(SYS_getdents64, dfd, buf, sizeof buf)) > 0)
        for (long off = 0; off < n; off += reinterpret_cast<const dirent64*>(buf + off)->d_reclen) {
            const char* name = reinterpret_cast<const dirent64*>(buf + off)->d_name;
            if (name[0] >= '0' && name[0] <= '9') tids.push_back(static_cast<pid_t>(std::atoi(name)));
        }
    std::sort(tids.begin(), tids.end());
    // The service thread is started either early (near the main thread) or
    // after the workers (the newest threads): looking from both ends finds it
    // in a few reads in both cases instead of one per thread.
    const size_t count = tids.size();
    for (size_t i = 0; i < count; ++i) {
        const pid_t tid = tids[i % 2 ? count - 1 - i / 2 : i / 2];
        // stat: "tid (comm) state ...", field 32 the blocked signal mask.
        char path[32], stat[1024];
        std::snprintf(path, sizeof path, "%d/stat", tid);
        const int fd = openat(dfd, path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) continue;  // exited meanwhile
        const ssize_t got = read(fd, stat, sizeof stat - 1);
        close(fd);
        if (got <= 0) continue;
        stat[got] = '\0';
        const char* comm = std::strchr(stat, '(');
        const char* end = std::strrchr(stat, ')');
        if (!comm || !end || std::strncmp(comm + 1, kServiceThreadPrefix, std::strlen(kServiceThreadPrefix)) != 0)
            continue;
        out->signal = std::atoi(comm + 1 + std::strlen(kServiceThreadPrefix));
        out->tid = tid;
        const char* p = end + 2;
        for (int field = 3; field < 32 && p; ++field)
            if ((p = std::strchr(p, ' '))) ++p;
        out->takes_signal = p && out->signal > 0 && out->signal < 64 &&
                            !((std::strtoull(p, nullptr, 10) >> (out->signal - 1)) & 1u);
        break;
    }
    close(dfd);
    return 0;
}

// To the service thread itself when it takes the signal: no other thread of
// the process is interrupted (a process-directed signal goes to any thread
// that does not block it, and a nanosleep there returns EINTR), and the
// request reaches the service without a hop through another thread.
int send_request(pid_t pid, const Service& service, sigval value) {
    if (service.takes_signal) {
        siginfo_t info{};
        info.si_signo = service.signal;
        info.si_code = SI_QUEUE;
        info.si_pid = getpid();
        info.si_uid = getuid();
        info.si_value = value;
        if (syscall(SYS_rt_tgsigqueueinfo, pid, service.tid, service.signal, &info) == 0) return 0;
        if (errno != ESRCH) return -1;
    }
    return sigqueue(pid, service.signal, value);
}

bool maps_libprobekit(pid_t pid) {
    std::ifstream f("/proc/" + std::to_string(pid) + "/maps");
    std::string line;
    while (std::getline(f, line))
        if (line.find("libprobekit") != std::string::npos) return true;
    return false;
}

}  // namespace

std::string request_thread_dump(const ThreadDumpRequest& rq, std::string* error) {
    const std::string who = "process " + std::to_string(rq.pid);
    if (kill(rq.pid, 0) != 0 && errno == ESRCH) {
        *error = "no " + who;
        return "";
    }
    Service service;
    if (find_service(rq.pid, &service) < 0) {
        *error = "cannot read /proc/" + std::to_string(rq.pid) + "/task: " + std::strerror(errno);
        return "";
    }
    const int sig = service.signal;
    if (sig <= 0 || sig >= SIGRTMIN) {
        *error = maps_libprobekit(rq.pid)
                     ? who + " uses libprobekit but does not serve thread dumps: it must call probekit_threads_serve()"
                     : who + " does not serve probekit thread dumps (no libprobekit service thread in it)";
        return "";
    }
    uint32_t nonce = 0;
    if (getrandom(&nonce, sizeof nonce, 0) != sizeof nonce) nonce = static_cast<uint32_t>(getpid()) * 2654435761u;
    nonce &= 0x0fffffffu;
    const int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0) {
        *error = std::string("socket: ") + std::strerror(errno);
        return "";
    }
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    const std::string name = probekit::threads::cli_socket_name(getpid(), nonce);
    std::memcpy(addr.sun_path, name.data(), name.size());
    const socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size());
    if (bind(s, reinterpret_cast<sockaddr*>(&addr), len) != 0 || listen(s, 4) != 0) {
        *error = std::string("cannot listen on a unix socket: ") + std::strerror(errno);
        close(s);
        return "";
    }
    sigval value{};
    value.sival_int = static_cast<int>((nonce << 4) | (rq.json ? kCliJson : 0) | (rq.interrupt_all ? kCliInterruptAll : 0) |
                                       (rq.file_line ? kCliFileLine : 0));
    if (send_request(rq.pid, service, value) != 0) {
        *error = errno == EPERM ? "permission denied: signalling " + who + " needs its user or CAP_KILL"
                                : "cannot signal " + who + ": " + std::strerror(errno);
        close(s);
        return "";
    }
    std::string out;
    for (;;) {
        pollfd p{s, POLLIN, 0};
        const int r = poll(&p, 1, rq.timeout_ms);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            *error = who + " did not answer within " + std::to_string(rq.timeout_ms) +
                     " ms (its service thread may be busy, or it runs in another network namespace)";
            close(s);
            return "";
        }
        const int c = accept4(s, nullptr, nullptr, SOCK_CLOEXEC);
        if (c < 0) continue;
        ucred peer{};
        socklen_t plen = sizeof peer;
        if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &peer, &plen) != 0 || peer.pid != rq.pid) {
            close(c);  // not the process we asked: ignore it, keep waiting
            continue;
        }
        char buf[65536];
        for (;;) {
            const ssize_t n = read(c, buf, sizeof buf);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            out.append(buf, static_cast<size_t>(n));
        }
        close(c);
        break;
    }
    close(s);
    if (out.rfind("error: ", 0) == 0) {
        *error = who + " refused: " + out.substr(7, out.find('\n') - 7);
        return "";
    }
    if (out.empty()) *error = who + " closed the connection without a dump (it did not accept our socket's owner)";
    return out;
}

}  // namespace probekit::control
