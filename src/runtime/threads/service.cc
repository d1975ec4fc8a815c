#include "runtime/threads/service.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "runtime/threads/capture.h"
#include "runtime/threads/dump.h"
#include "runtime/threads/panic.h"
#include "runtime/threads/slot.h"

namespace probekit::threads {
namespace {

std::atomic<int> g_request_fd{-1};  // write end, non-blocking
int g_read_fd = -1;
std::mutex g_sink_mutex;
std::string& g_sink_path = *new std::string;  // "" = stderr; never destroyed: the service may run during exit

// Another process's kill (SI_USER), tgkill (SI_TKILL) or sigqueue (SI_QUEUE,
// from `probekit threads`). Terminal resizes (SI_KERNEL) never get here.
bool on_external_signal(const siginfo_t* info) {
    Request r{};
    if (info->si_code == SI_QUEUE) {
        r.kind = RequestKind::cli;
        r.pid = info->si_pid;
        r.uid = info->si_uid;
        r.value = static_cast<uint32_t>(info->si_value.sival_int);
    } else if (info->si_code == SI_USER || info->si_code == SI_TKILL) {
        r.kind = RequestKind::sink;
    } else {
        return false;
    }
    return post_request(r);
}

void send_to_sink(const Dump& d) {
    bool close_after = false;
    std::string error;
    const int fd = open_sink(d.number, &close_after, &error);
    if (fd < 0) {
        const std::string msg = "probekit: thread dump #" + std::to_string(d.number) + " lost: " + error + "\n";
        write_all(2, msg);
        return;
    }
    write_all(fd, d.text);
    if (close_after) ::close(fd);
}

// `probekit threads`: connect to the socket it listens on, check that whoever
// listens there is the same user as this process (or root), and write the
// dump. The kernel already checked that the sender may signal us; SO_PEERCRED
// is the check that cannot be forged (si_pid can be, with rt_sigqueueinfo).
void answer_cli(const Request& r) {
    const int s = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0) return;
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    const std::string name = cli_socket_name(r.pid, r.value >> 4);
    std::memcpy(addr.sun_path, name.data(), name.size());
    const socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size());
    ucred peer{};
    socklen_t peer_len = sizeof peer;
    if (::connect(s, reinterpret_cast<sockaddr*>(&addr), len) == 0 &&
        ::getsockopt(s, SOL_SOCKET, SO_PEERCRED, &peer, &peer_len) == 0 && peer.pid == r.pid &&
        (peer.uid == 0 || peer.uid == geteuid())) {
        DumpOptions o;
        o.mode = (r.value & kCliInterruptAll) ? PROBEKIT_THREADS_INTERRUPT_ALL : PROBEKIT_THREADS_RUNNING;
        o.file_line = (r.value & kCliFileLine) != 0;
        int status = 0;
        if (auto d = take_dump(o, &status)) {
            write_all(s, formatted(*d, (r.value & kCliJson) ? PROBEKIT_THREADS_JSON : PROBEKIT_THREADS_TEXT));
        } else {
            write_all(s, std::string("error: ") + probekit_threads_strerror(status) + "\n");
        }
    }
    ::close(s);
}

// fork: the child has no service thread; requests there are refused rather
// than queued for nobody.
void after_fork_child() {
    const int fd = g_request_fd.exchange(-1);
    if (fd >= 0) ::close(fd);
    if (g_read_fd >= 0) ::close(g_read_fd), g_read_fd = -1;
}

void* service_main(void*) {
    // Created with every signal blocked; it takes the capture signal only:
    // `probekit threads` sends its requests here (rt_tgsigqueueinfo), so no
    // application thread is interrupted to relay them.
    sigset_t capture;
    sigemptyset(&capture);
    sigaddset(&capture, capture_signal());
    pthread_sigmask(SIG_UNBLOCK, &capture, nullptr);
    Request r;
    for (;;) {
        const ssize_t n = ::read(g_read_fd, &r, sizeof r);
        if (n < 0 && errno == EINTR) continue;
        if (n != static_cast<ssize_t>(sizeof r)) return nullptr;
        try {
            if (r.kind == RequestKind::sink) {
                int status = 0;
                if (auto d = take_dump(DumpOptions{}, &status)) send_to_sink(*d);
            } else if (r.kind == RequestKind::cli) {
                answer_cli(r);
            } else if (r.kind == RequestKind::panic) {
                serve_panic();
            }
        } catch (const std::exception&) {
            // Out of memory while formatting: this request is lost, the
            // service stays.
        }
    }
}

}  // namespace

int open_sink(uint64_t dump_number, bool* close_after, std::string* error) {
    std::string path;
    {
        std::lock_guard lock(g_sink_mutex);
        path = g_sink_path;
    }
    *close_after = false;
    if (path.empty()) return 2;
    std::string expanded;
    for (size_t i = 0; i < path.size(); ++i) {
        if (path[i] == '%' && i + 1 < path.size() && path[i + 1] == 'p') expanded += std::to_string(getpid()), ++i;
        else if (path[i] == '%' && i + 1 < path.size() && path[i + 1] == 'n') expanded += std::to_string(dump_number), ++i;
        else expanded += path[i];
    }
    // O_EXCL: never over an existing file; O_NOFOLLOW: never through a link
    // planted at that name; 0600: dumps show memory contents and names.
    const int fd = ::open(expanded.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        *error = "cannot create " + expanded + ": " + std::strerror(errno);
        return -1;
    }
    *close_after = true;
    return fd;
}

bool post_request(const Request& r) {
    const int fd = g_request_fd.load(std::memory_order_acquire);
    if (fd < 0) return false;
    const int saved = errno;
    const bool ok = ::write(fd, &r, sizeof r) == static_cast<ssize_t>(sizeof r);  // atomic: < PIPE_BUF
    errno = saved;
    return ok;
}

int start_service(const char* sink_path) {
    {
        std::lock_guard lock(g_sink_mutex);
        g_sink_path = sink_path ? sink_path : "";
    }
    static std::mutex start_mutex;
    std::lock_guard lock(start_mutex);
    if (g_request_fd.load() >= 0) return PROBEKIT_OK;
    if (!install_capture_handler()) return PROBEKIT_THREADS_E_SYSTEM;
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return PROBEKIT_THREADS_E_SYSTEM;
    ::fcntl(fds[1], F_SETFL, O_NONBLOCK);
    g_read_fd = fds[0];
    // The service thread blocks every signal but the capture signal (which it
    // unblocks itself once running: service_main).
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_t t;
    const int err = pthread_create(&t, nullptr, service_main, nullptr);
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    if (err != 0) {
        ::close(fds[0]);
        ::close(fds[1]);
        return PROBEKIT_THREADS_E_SYSTEM;
    }
    pthread_detach(t);
    pthread_atfork(nullptr, nullptr, after_fork_child);
    char name[16];
    std::snprintf(name, sizeof name, "%s%d", kServiceThreadPrefix, capture_signal());
    pthread_setname_np(t, name);
    g_request_fd.store(fds[1], std::memory_order_release);
    set_external_hook(on_external_signal);
    return PROBEKIT_OK;
}

}  // namespace probekit::threads

extern "C" {

int probekit_threads_serve(const char* sink_path) { return probekit::threads::start_service(sink_path); }

int probekit_threads_request(void) {
    using namespace probekit::threads;
    Request r{};
    r.kind = RequestKind::sink;
    if (!post_request(r)) return PROBEKIT_E_INVALID;
    return PROBEKIT_OK;
}

}  // extern "C"
