// The capture signal's handler. Everything here is async-signal-safe: no
// allocation, no lock, no stdio, no unwinder (glibc backtrace() may take the
// loader lock through dl_iterate_phdr and deadlock a thread interrupted inside
// dlopen or an exception throw). The handler copies registers and a stack
// window; the requester unwinds the copy later, outside any handler.
#include "runtime/threads/capture.h"
#include "runtime/threads/watchdog.h"

#include <cerrno>
#include <climits>
#include <cstring>
#include <ctime>
#include <linux/futex.h>
#include <mutex>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <ucontext.h>
#include <unistd.h>

namespace probekit::threads {
namespace {

struct sigaction g_previous;
std::atomic<ExternalHook> g_external_hook{nullptr};
// Depth of libprobekit handlers on this thread. initial-exec: static TLS,
// which a handler may touch without the allocation a dlopened library's
// dynamic TLS can make on first access.
__attribute__((tls_model("initial-exec"))) thread_local int t_handler_depth = 0;

pid_t raw_gettid() { return static_cast<pid_t>(syscall(SYS_gettid)); }
pid_t raw_getpid() { return static_cast<pid_t>(syscall(SYS_getpid)); }

void chain_previous(int sig, siginfo_t* info, void* uc) {
    if (g_previous.sa_flags & SA_SIGINFO) {
        if (g_previous.sa_sigaction) g_previous.sa_sigaction(sig, info, uc);
    } else if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN) {
        g_previous.sa_handler(sig);
    }
    // SIG_DFL and SIG_IGN: the default signal (SIGWINCH) is ignored by
    // default; a configured signal whose default would kill the process is
    // not re-raised here: a stray one must not kill a process that asked
    // libprobekit to own it.
}

void on_capture_signal(int sig, siginfo_t* info, void* uc) {
    const int saved_errno = errno;
    const pid_t tid = raw_gettid();
    ++t_handler_depth;
    // Capture requests come from this process through tgkill (SI_TKILL, the
    // kernel fills si_pid); another process cannot forge SI_TKILL with our
    // pid (rt_tgsigqueueinfo refuses si_code SI_TKILL across processes).
    if (info->si_code == SI_TKILL && info->si_pid == raw_getpid()) {
        if (Slot* slot = find_slot(tid)) {
            int armed = kArmed;
            if (slot->state.compare_exchange_strong(armed, kCapturing, std::memory_order_acquire)) {
                capture_context(*slot, uc);
                slot->state.store(kDone, std::memory_order_release);
                count_answer(slot->generation);
            }
        }
        // Not armed: a late delivery after the requester gave up; nothing to do.
    } else if (info->si_code == SI_TIMER) {
        if (Slot* slot = find_slot(tid)) watchdog_tick(*slot);
    } else {
        ExternalHook hook = g_external_hook.load(std::memory_order_acquire);
        if (!(hook && info->si_code != SI_KERNEL && hook(info))) chain_previous(sig, info, uc);
    }
    --t_handler_depth;
    errno = saved_errno;
}

}  // namespace

void capture_context(Slot& slot, const void* ucontext) {
    const auto* uc = static_cast<const ucontext_t*>(ucontext);
#if defined(__x86_64__)
    const greg_t* g = uc->uc_mcontext.gregs;
    const int order[kRegCount] = {REG_RAX, REG_RDX, REG_RCX, REG_RBX, REG_RSI, REG_RDI, REG_RBP, REG_RSP,
                                  REG_R8,  REG_R9,  REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15, REG_RIP};
    for (int i = 0; i < kRegCount; ++i) slot.regs[i] = static_cast<uint64_t>(g[order[i]]);
    slot.sp = static_cast<uintptr_t>(g[REG_RSP]);
#else
    (void)uc;
    slot.sp = 0;
#endif
    slot.copied = 0;
    slot.answered_ns = 0;
    if (slot.sp == 0 || !slot.window) return;
    size_t len = slot.window_size;
    if (slot.sp >= slot.stack_lo && slot.sp < slot.stack_hi && slot.stack_hi - slot.sp < len)
        len = slot.stack_hi - slot.sp;
    // process_vm_readv on ourselves rather than memcpy: the kernel stops at
    // an unmapped page instead of faulting (a thread on a sigaltstack or a
    // coroutine stack has no bounds we know), and sanitizers do not flag
    // reading other frames' redzones. A raw syscall: no libc interceptor.
    struct iovec local = {slot.window, len};
    struct iovec remote = {reinterpret_cast<void*>(slot.sp), len};
    const long n = syscall(SYS_process_vm_readv, raw_getpid(), &local, 1UL, &remote, 1UL, 0UL);
    slot.copied = n > 0 ? static_cast<size_t>(n) : 0;
    // clock_gettime is async-signal-safe (POSIX), and a vDSO call here.
    struct timespec ts {};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    slot.answered_ns = static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

bool install_capture_handler() {
    static std::once_flag once;
    static int result_errno = 0;
    std::call_once(once, [] {
        freeze_configuration();
        struct sigaction sa {};
        sa.sa_sigaction = on_capture_signal;
        // SA_RESTART: calls that can be restarted are (read, write on
        // sockets, futex waits); nanosleep and a few others return EINTR
        // anyway (docs/threads.md). SA_ONSTACK: a thread on its alternate
        // stack keeps it.
        sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
        sigemptyset(&sa.sa_mask);
        if (sigaction(capture_signal(), &sa, &g_previous) != 0) result_errno = errno;
    });
    errno = result_errno;
    return result_errno == 0;
}

std::atomic<int> g_pending_answers{0};

void count_answer(uint32_t generation) {
    int w = g_pending_answers.load(std::memory_order_relaxed);
    while (w == pending_word(generation, static_cast<uint32_t>(w)) && (w & 0xffff) != 0) {
        if (g_pending_answers.compare_exchange_weak(w, w - 1, std::memory_order_acq_rel)) {
            if ((w & 0xffff) == 1) futex_wake_all(&g_pending_answers);
            return;
        }
    }
}

void set_external_hook(ExternalHook hook) { g_external_hook.store(hook, std::memory_order_release); }

bool in_probekit_handler() { return t_handler_depth > 0; }

void futex_wake_all(std::atomic<int>* word) {
    syscall(SYS_futex, reinterpret_cast<int*>(word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

bool futex_wait(std::atomic<int>* word, int expected, long timeout_ns) {
    struct timespec ts = {timeout_ns / 1000000000L, timeout_ns % 1000000000L};
    const long r = syscall(SYS_futex, reinterpret_cast<int*>(word), FUTEX_WAIT_PRIVATE, expected, &ts, nullptr, 0);
    return !(r != 0 && errno == ETIMEDOUT);
}

}  // namespace probekit::threads
