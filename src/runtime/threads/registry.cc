// Registering threads: their slots, the capture signal and window size.
#include <cerrno>
#include <csignal>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime/threads/capture.h"
#include "runtime/threads/dump.h"
#include "runtime/threads/slot.h"
#include "runtime/threads/watchdog.h"

namespace probekit::threads {

std::atomic<Slot*> g_slots[kMaxSlots];
std::atomic<pid_t> g_slot_tids[kMaxSlots];
std::atomic<size_t> g_slot_high{0};
std::mutex g_registry_mutex;

namespace {

// SIGWINCH by default: gdb passes it without stopping, its default action is
// to ignore it (a stray one, or one sent to a process that does not use
// libprobekit, does nothing), it is not Go's preemption signal (SIGURG),
// not a real-time signal, and profilers (SIGPROF) and job control do not use
// it. Terminal resizes also send it: the handler tells them apart by si_code
// and passes them on to the application's own handler (docs/threads.md).
std::atomic<int> g_signal{SIGWINCH};
std::atomic<size_t> g_window{32 * 1024};
std::atomic<bool> g_frozen{false};  // the handler is installed: signal and window are fixed

__attribute__((tls_model("initial-exec"))) thread_local Slot* t_slot = nullptr;

pthread_key_t g_exit_key;
pthread_once_t g_once = PTHREAD_ONCE_INIT;

void remove_and_free(Slot* slot) {
    {
        std::lock_guard lock(g_registry_mutex);
        watchdog_detach(*slot);
        for (size_t i = 0; i < g_slot_high.load(std::memory_order_relaxed); ++i) {
            if (g_slots[i].load(std::memory_order_relaxed) == slot) {
                g_slot_tids[i].store(0, std::memory_order_release);
                g_slots[i].store(nullptr, std::memory_order_release);
                break;
            }
        }
    }
    // Removed from the table before freeing: a capture signal arriving now
    // finds no slot and returns.
    delete[] slot->window;
    delete slot;
}

void on_thread_exit(void* p) {
    if (t_slot == p) t_slot = nullptr;
    remove_and_free(static_cast<Slot*>(p));
}

// fork: the child has only the forking thread; the other slots name threads
// that do not exist there. The registry mutex is held across fork so that the
// child does not inherit it locked by a thread that is gone.
void before_fork() { g_registry_mutex.lock(); }
void after_fork_parent() { g_registry_mutex.unlock(); }
void after_fork_child() {
    const pid_t self = static_cast<pid_t>(syscall(SYS_gettid));
    for (size_t i = 0; i < g_slot_high.load(std::memory_order_relaxed); ++i) {
        Slot* s = g_slots[i].load(std::memory_order_relaxed);
        if (!s) continue;
        if (s == t_slot) {
            s->tid = self;
            g_slot_tids[i].store(self, std::memory_order_relaxed);
            s->state.store(kIdle, std::memory_order_relaxed);
            continue;
        }
        g_slot_tids[i].store(0, std::memory_order_relaxed);
        g_slots[i].store(nullptr, std::memory_order_relaxed);
        delete[] s->window;
        delete s;
    }
    g_registry_mutex.unlock();
}

void init_once() {
    pthread_key_create(&g_exit_key, on_thread_exit);
    pthread_atfork(before_fork, after_fork_parent, after_fork_child);
}

}  // namespace

int capture_signal() { return g_signal.load(std::memory_order_relaxed); }
size_t stack_window() { return g_window.load(std::memory_order_relaxed); }
void freeze_configuration() {
    std::lock_guard lock(g_registry_mutex);
    g_frozen.store(true);
}

bool configure(int signal, size_t window) {
    std::lock_guard lock(g_registry_mutex);
    if (g_frozen.load()) return false;
    g_signal.store(signal);
    g_window.store(window);
    return true;
}

Slot* find_slot(pid_t tid) {
    const size_t high = g_slot_high.load(std::memory_order_acquire);
    for (size_t i = 0; i < high; ++i)
        if (g_slot_tids[i].load(std::memory_order_acquire) == tid) return g_slots[i].load(std::memory_order_acquire);
    return nullptr;
}

Slot* current_slot() { return t_slot; }

}  // namespace probekit::threads

using namespace probekit::threads;

extern "C" {

int probekit_thread_register(const char* name, probekit_thread_state_fn fn, void* data) {
    if (dump_in_progress_here()) return PROBEKIT_THREADS_E_BUSY;
    pthread_once(&g_once, init_once);
    if (!install_capture_handler()) return PROBEKIT_THREADS_E_SYSTEM;
    if (Slot* s = t_slot) {
        std::lock_guard lock(g_registry_mutex);
        s->name = name ? name : "";
        s->state_fn = fn;
        s->state_data = data;
        return PROBEKIT_OK;
    }
    auto* slot = new (std::nothrow) Slot;
    if (!slot) return PROBEKIT_E_NO_MEMORY;
    slot->window_size = stack_window();
    slot->window = new (std::nothrow) unsigned char[slot->window_size];
    if (!slot->window) {
        delete slot;
        return PROBEKIT_E_NO_MEMORY;
    }
    slot->tid = static_cast<pid_t>(syscall(SYS_gettid));
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        void* addr = nullptr;
        size_t size = 0;
        if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
            slot->stack_lo = reinterpret_cast<uintptr_t>(addr);
            slot->stack_hi = slot->stack_lo + size;
        }
        pthread_attr_destroy(&attr);
    }
    try {
        slot->name = name ? name : "";
    } catch (...) {
        delete[] slot->window;
        delete slot;
        return PROBEKIT_E_NO_MEMORY;
    }
    slot->state_fn = fn;
    slot->state_data = data;
    {
        std::lock_guard lock(g_registry_mutex);
        size_t i = 0;
        while (i < kMaxSlots && g_slots[i].load(std::memory_order_relaxed)) ++i;
        if (i == kMaxSlots) {
            delete[] slot->window;
            delete slot;
            return PROBEKIT_E_NO_MEMORY;
        }
        g_slots[i].store(slot, std::memory_order_release);
        g_slot_tids[i].store(slot->tid, std::memory_order_release);
        watchdog_attach(*slot);
        if (i >= g_slot_high.load(std::memory_order_relaxed)) g_slot_high.store(i + 1, std::memory_order_release);
    }
    t_slot = slot;
    pthread_setspecific(g_exit_key, slot);
    return PROBEKIT_OK;
}

int probekit_thread_unregister(void) {
    if (dump_in_progress_here()) return PROBEKIT_THREADS_E_BUSY;
    Slot* s = t_slot;
    if (!s) return PROBEKIT_E_NOT_FOUND;
    t_slot = nullptr;
    pthread_setspecific(g_exit_key, nullptr);
    remove_and_free(s);
    return PROBEKIT_OK;
}

void probekit_thread_progress(void) {
    if (Slot* s = t_slot) s->progress.fetch_add(1, std::memory_order_relaxed);
}

int probekit_threads_configure(const struct probekit_threads_config* config) {
    if (!config) return PROBEKIT_E_INVALID;
    int sig = config->signal ? config->signal : SIGWINCH;
    size_t window = config->stack_window ? config->stack_window : 32 * 1024;
    if (sig <= 0 || sig >= SIGRTMIN || sig == SIGKILL || sig == SIGSTOP || sig == SIGSEGV || sig == SIGBUS ||
        sig == SIGILL || sig == SIGFPE || sig == SIGABRT || sig == SIGTRAP || window < 1024 || window > (64u << 20))
        return PROBEKIT_E_INVALID;
    if (!configure(sig, window)) return PROBEKIT_THREADS_E_BUSY;
    return PROBEKIT_OK;
}

}  // extern "C"
