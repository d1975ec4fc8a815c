// The panic handler: on SIGSEGV, SIGBUS, SIGILL, SIGFPE or SIGABRT, dump every
// thread, then die exactly as without it.
//
// A fatal handler cannot symbolize: libdw allocates and the heap may be what
// broke. So the faulting thread only does async-signal-safe work: it copies
// its own context into its slot (as the capture handler does), writes a
// header line with write(2), and asks the service thread (a normal thread,
// not in a handler) to take the dump, waiting at most kPanicWaitNs. If the
// service does not answer (the heap lock is held by a thread that crashed
// holding it, say), the header and the faulting pc are all that is written.
// Then the default action is restored and the signal re-raised, so the exit
// status and the core dump are those of the original fault.
#include "runtime/threads/panic.h"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <string>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "runtime/threads/capture.h"
#include "runtime/threads/dump.h"
#include "runtime/threads/service.h"
#include "runtime/threads/slot.h"

namespace probekit::threads {
namespace {

constexpr long kPanicWaitNs = 5L * 1000 * 1000 * 1000;
constexpr int kFatalSignals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};

std::atomic<int> g_panicking{0};
std::atomic<int> g_panic_done{0};
std::atomic<pid_t> g_service_tid{0};
// The fault, for the service thread.
pid_t g_fault_tid;
int g_fault_signal, g_fault_code;
uintptr_t g_fault_addr, g_fault_pc;

// Async-signal-safe formatting: no snprintf in a fatal handler.
struct Line {
    char buf[256];
    size_t len = 0;
    Line& s(const char* t) {
        while (*t && len < sizeof buf) buf[len++] = *t++;
        return *this;
    }
    Line& num(unsigned long v, int base = 10) {
        char tmp[24];
        int n = 0;
        do tmp[n++] = "0123456789abcdef"[v % static_cast<unsigned>(base)], v /= static_cast<unsigned>(base);
        while (v && n < 24);
        if (base == 16) s("0x");
        while (n && len < sizeof buf) buf[len++] = tmp[--n];
        return *this;
    }
    void write_to(int fd) const {
        size_t off = 0;
        while (off < len) {
            const ssize_t w = ::write(fd, buf + off, len - off);
            if (w <= 0) break;
            off += static_cast<size_t>(w);
        }
    }
};

const char* signal_name(int sig) {
    switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGILL: return "SIGILL";
    case SIGFPE: return "SIGFPE";
    case SIGABRT: return "SIGABRT";
    }
    return "signal";
}

void die_as_before(int sig, const siginfo_t* info) {
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, nullptr);
    // A fault (si_code > 0) happens again when the handler returns, now with
    // the default action; a signal that was sent (kill, raise, abort) is sent
    // again. It stays pending until the handler returns (it is blocked here).
    if (info->si_code <= 0) syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), sig);
}

void on_fatal(int sig, siginfo_t* info, void* uc) {
    const pid_t tid = static_cast<pid_t>(syscall(SYS_gettid));
    if (g_panicking.exchange(1) != 0) {
        // Another thread is dumping: let it finish, then die the same way.
        futex_wait(&g_panic_done, 0, kPanicWaitNs);
        die_as_before(sig, info);
        return;
    }
    g_fault_tid = tid;
    g_fault_signal = sig;
    g_fault_code = info->si_code;
    g_fault_addr = reinterpret_cast<uintptr_t>(info->si_addr);
#if defined(__x86_64__)
    g_fault_pc = static_cast<uintptr_t>(static_cast<const ucontext_t*>(uc)->uc_mcontext.gregs[REG_RIP]);
#endif
    Line head;
    head.s("probekit: fatal ").s(signal_name(sig)).s(" in thread ").num(static_cast<unsigned long>(tid));
    if (sig != SIGABRT) head.s(" at address ").num(g_fault_addr, 16);
    head.s(", pc ").num(g_fault_pc, 16).s("\n");
    head.write_to(2);
    if (Slot* slot = find_slot(tid)) {
        capture_context(*slot, uc);
        slot->state.store(kDone, std::memory_order_release);
    }
    Request r{};
    r.kind = RequestKind::panic;
    if (tid == g_service_tid.load() || !post_request(r) || !futex_wait(&g_panic_done, 0, kPanicWaitNs) ||
        g_panic_done.load() == 0) {
        Line l;
        l.s("probekit: no thread dump (the service thread did not answer)\n");
        l.write_to(2);
    }
    die_as_before(sig, info);
}

}  // namespace

void serve_panic() {
    g_service_tid.store(static_cast<pid_t>(syscall(SYS_gettid)));
    std::string header = std::string("fatal ") + signal_name(g_fault_signal) + " (si_code " +
                         std::to_string(g_fault_code) + ") in thread " + std::to_string(g_fault_tid);
    if (g_fault_signal != SIGABRT) {
        char b[40];
        std::snprintf(b, sizeof b, " at address 0x%lx", static_cast<unsigned long>(g_fault_addr));
        header += b;
    }
    header += "; the faulting thread is listed first";
    if (auto d = take_panic_dump(g_fault_tid, header)) {
        bool close_after = false;
        std::string error;
        const int fd = open_sink(d->number, &close_after, &error);
        if (fd >= 0) {
            write_all(fd, d->text);
            if (close_after) ::close(fd);
        }
    }
    g_panic_done.store(1);
    futex_wake_all(&g_panic_done);
}

}  // namespace probekit::threads

extern "C" int probekit_threads_install_panic(const char* sink_path) {
    using namespace probekit::threads;
    const int r = start_service(sink_path);
    if (r != PROBEKIT_OK) return r;
    struct sigaction sa {};
    sa.sa_sigaction = on_fatal;
    // SA_ONSTACK: a thread with an alternate stack survives a stack overflow
    // long enough to be dumped. SA_RESETHAND is not used: the handler itself
    // restores the default once the dump is written.
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    for (int sig : kFatalSignals)
        if (sigaction(sig, &sa, nullptr) != 0) return PROBEKIT_THREADS_E_SYSTEM;
    return PROBEKIT_OK;
}
