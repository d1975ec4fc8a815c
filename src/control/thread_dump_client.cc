// The CLI side of the channel. The process runs a service thread named
// "probekit-sigN" (N: its capture signal): finding it in /proc/PID/task is
// how we know, before sending anything, that the process serves dumps and on
// which signal (sending a signal a process does not handle could kill it).
// We listen on an abstract unix socket named after our pid and a random
// nonce, sigqueue the signal with the nonce and flags as its value, and
// accept one connection, from the target pid (SO_PEERCRED), which writes the
// dump and closes. The process checks our socket's credentials in turn.
#include "control/thread_dump_client.h"
#include "runtime/threads/service.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <poll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace probekit::control {
namespace {

using probekit::threads::kCliFileLine;
using probekit::threads::kCliInterruptAll;
using probekit::threads::kCliJson;
using probekit::threads::kServiceThreadPrefix;

std::string read_line(const std::string& path) {
    std::ifstream f(path);
    std::string s;
    std::getline(f, s);
    return s;
}

// The capture signal of the process's service thread, 0 if it has none, -1
// (with errno) if its task list cannot be read.
int service_signal(pid_t pid) {
    const std::string dir = "/proc/" + std::to_string(pid) + "/task";
    DIR* d = opendir(dir.c_str());
    if (!d) return -1;
    int sig = 0;
    while (const dirent* e = readdir(d)) {
        if (e->d_name[0] == '.') continue;
        const std::string comm = read_line(dir + "/" + e->d_name + "/comm");
        if (comm.rfind(kServiceThreadPrefix, 0) == 0) {
            sig = std::atoi(comm.c_str() + std::strlen(kServiceThreadPrefix));
            break;
        }
    }
    closedir(d);
    return sig;
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
    const int sig = service_signal(rq.pid);
    if (sig < 0) {
        *error = "cannot read /proc/" + std::to_string(rq.pid) + "/task: " + std::strerror(errno);
        return "";
    }
    if (sig == 0 || sig >= SIGRTMIN) {
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
    if (sigqueue(rq.pid, sig, value) != 0) {
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
