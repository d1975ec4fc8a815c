// The capture signal: its handler, and signalling a slot's thread.
#pragma once

#include <csignal>
#include <cstdint>
#include <sys/types.h>

#include "runtime/threads/slot.h"

namespace probekit::threads {

// Installs the capture signal's handler once (idempotent, thread-safe).
// Returns false and sets errno if sigaction fails.
bool install_capture_handler();

// Async-signal-safe: copies the interrupted context's registers and the
// stack window above its stack pointer into the slot.
void capture_context(Slot& slot, const void* ucontext);

// Hook for signals that are not capture requests from this process
// (another process's kill/sigqueue): set by the service (service.cc), called
// from the handler, so it must be async-signal-safe. Returns true when it
// took the signal; otherwise the application's previous handler runs.
using ExternalHook = bool (*)(const siginfo_t* info);
void set_external_hook(ExternalHook hook);

// True while the calling thread runs a libprobekit signal handler.
bool in_probekit_handler();

// The answers the dump being taken still expects: (generation << 16) | count.
// The requester sets it before signalling; each handler counts its answer
// down (count_answer), only while the generation is the one its slot was
// armed for, so that a late answer to an earlier dump cannot count for this
// one. The last answer wakes the requester: it sleeps once per dump, not once
// per thread (each wake-up costs a trip through the scheduler, milliseconds
// on a loaded machine).
extern std::atomic<int> g_pending_answers;
inline int pending_word(uint32_t generation, uint32_t count) {
    return static_cast<int>(((generation & 0xffffu) << 16) | (count & 0xffffu));
}
// Async-signal-safe (a lock-free CAS loop and a futex wake).
void count_answer(uint32_t generation);

// futex wait/wake on a 32-bit word.
void futex_wake_all(std::atomic<int>* word);
// Waits while *word == expected, at most timeout_ns. Returns false on timeout.
bool futex_wait(std::atomic<int>* word, int expected, long timeout_ns);

}  // namespace probekit::threads
