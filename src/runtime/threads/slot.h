// The per-thread capture slot and the table of registered threads.
//
// The signal handler finds its slot by kernel tid in a fixed table of atomic
// tids and pointers (no TLS: a thread_local in a dlopened libprobekit can
// allocate on first access, which a handler must not do). It compares tids
// only and dereferences nothing but its own slot: other threads' slots may be
// freed at any time. Only the thread itself frees its slot, after removing it
// from the table, so a handler on that thread never sees a freed slot;
// requesters hold g_registry_mutex while they read slots, and unregister
// takes it before freeing.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <sys/types.h>

#include <probekit/threads.h>

namespace probekit::threads {

// Slot states: the requester arms, the handler captures, the requester
// collects or, after its bounded wait, disarms.
enum SlotState : int { kIdle = 0, kArmed = 1, kCapturing = 2, kDone = 3 };

// DWARF register numbers 0..16 on x86-64 (rax rdx rcx rbx rsi rdi rbp rsp
// r8..r15, return address = pc).
inline constexpr int kRegCount = 17;

struct Slot {
    std::atomic<int> state{kIdle};
    pid_t tid = 0;
    // Bounds of the thread's stack (pthread_getattr_np at registration):
    // unwinding must not read the live stack, only the copy.
    uintptr_t stack_lo = 0, stack_hi = 0;
    // Written by the handler, read by the requester after kDone (acquire).
    uint64_t regs[kRegCount] = {};
    uintptr_t sp = 0;
    size_t copied = 0;
    uint64_t answered_ns = 0;  // CLOCK_MONOTONIC when the handler finished copying
    uint32_t generation = 0;   // of the dump it was armed for (count_answer); set before kArmed
    unsigned char* window = nullptr;
    size_t window_size = 0;
    std::atomic<uint64_t> progress{0};
    // Owned by the registry mutex.
    std::string name;
    probekit_thread_state_fn state_fn = nullptr;
    void* state_data = nullptr;
    // Watchdog (watchdog.cc): the thread's CPU-time timer, and what its
    // handler saw last. Touched by that thread's handler only.
    void* watchdog_timer = nullptr;
    bool has_watchdog_timer = false;
    uint64_t watchdog_progress = 0;
    unsigned watchdog_stuck_ms = 0;
    bool watchdog_warned = false;
};

inline constexpr size_t kMaxSlots = 4096;
extern std::atomic<Slot*> g_slots[kMaxSlots];
extern std::atomic<pid_t> g_slot_tids[kMaxSlots];  // 0: free; set after the pointer, cleared before
extern std::atomic<size_t> g_slot_high;  // slots [0, high) may be in use
extern std::mutex g_registry_mutex;

// The configured capture signal and stack window.
int capture_signal();
size_t stack_window();
bool configure(int signal, size_t window);  // false once the handler is installed
void freeze_configuration();

// The calling thread's slot, or null (initial-exec TLS).
Slot* current_slot();

// Async-signal-safe: the calling thread's slot, or null.
Slot* find_slot(pid_t tid);

}  // namespace probekit::threads
