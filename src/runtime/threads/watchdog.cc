// The watchdog (haproxy's model): each registered thread gets a POSIX timer on
// its own CPU clock, delivering the capture signal to that thread
// (SIGEV_THREAD_ID) every warn_ms of CPU it consumes. A thread that sleeps
// consumes no CPU, so its timer never fires: idle threads cost nothing, and
// only a thread that runs is checked. At each tick the handler compares the
// thread's progress counter (probekit_thread_progress) with the last tick:
// after warn_ms of CPU without progress it asks the service thread for a dump
// (once per episode); after panic_ms (if set) it raises SIGABRT on itself,
// which the panic handler, if installed, turns into a full dump before the
// process dies. Threads that never marked progress are not judged.
#include "runtime/threads/watchdog.h"

#include <atomic>
#include <csignal>
#include <ctime>
#include <mutex>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime/threads/capture.h"
#include "runtime/threads/service.h"

namespace probekit::threads {
namespace {

std::atomic<unsigned> g_warn_ms{0};
std::atomic<unsigned> g_panic_ms{0};

void write_line(const char* s) {
    size_t n = 0;
    while (s[n]) ++n;
    ssize_t w = ::write(2, s, n);
    (void)w;
}

}  // namespace

void watchdog_tick(Slot& slot) {
    const unsigned warn = g_warn_ms.load(std::memory_order_relaxed);
    if (warn == 0) return;
    const uint64_t progress = slot.progress.load(std::memory_order_relaxed);
    if (progress != slot.watchdog_progress || progress == 0) {
        slot.watchdog_progress = progress;
        slot.watchdog_stuck_ms = 0;
        slot.watchdog_warned = false;
        return;
    }
    slot.watchdog_stuck_ms += warn;
    const unsigned panic = g_panic_ms.load(std::memory_order_relaxed);
    if (panic && slot.watchdog_stuck_ms >= panic) {
        write_line("probekit: watchdog: a thread ran without progress past the panic limit: aborting\n");
        syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), SIGABRT);
        return;
    }
    if (!slot.watchdog_warned) {
        slot.watchdog_warned = true;
        write_line("probekit: watchdog: a thread runs without progress; dumping\n");
        Request r{};
        r.kind = RequestKind::sink;
        post_request(r);
    }
}

void watchdog_attach(Slot& slot) {
    const unsigned warn = g_warn_ms.load();
    if (warn == 0 || slot.has_watchdog_timer) return;
    sigevent ev{};
    ev.sigev_notify = SIGEV_THREAD_ID;
    ev.sigev_signo = capture_signal();
    ev._sigev_un._tid = slot.tid;
    // The thread's CPU clock (what pthread_getcpuclockid returns for it).
    const clockid_t clock = static_cast<clockid_t>((~static_cast<unsigned>(slot.tid) << 3) | 6);
    timer_t timer;
    if (timer_create(clock, &ev, &timer) != 0) return;
    itimerspec spec{};
    spec.it_value.tv_sec = warn / 1000;
    spec.it_value.tv_nsec = static_cast<long>(warn % 1000) * 1000000L;
    spec.it_interval = spec.it_value;
    timer_settime(timer, 0, &spec, nullptr);
    slot.watchdog_timer = timer;
    slot.has_watchdog_timer = true;
}

void watchdog_detach(Slot& slot) {
    if (!slot.has_watchdog_timer) return;
    timer_delete(static_cast<timer_t>(slot.watchdog_timer));
    slot.has_watchdog_timer = false;
}

}  // namespace probekit::threads

extern "C" int probekit_threads_watchdog(unsigned warn_ms, unsigned panic_ms, const char* sink_path) {
    using namespace probekit::threads;
    if (warn_ms == 0 || (panic_ms && panic_ms < warn_ms)) return PROBEKIT_E_INVALID;
    const int r = start_service(sink_path);
    if (r != PROBEKIT_OK) return r;
    g_panic_ms.store(panic_ms);
    g_warn_ms.store(warn_ms);
    std::lock_guard lock(g_registry_mutex);
    for (size_t i = 0; i < g_slot_high.load(); ++i)
        if (Slot* s = g_slots[i].load()) watchdog_attach(*s);
    return PROBEKIT_OK;
}
