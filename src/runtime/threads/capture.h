// The capture signal: its handler, and signalling a slot's thread.
#pragma once

#include <csignal>
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

// futex wait/wake on a 32-bit word (the handler's completion counter).
void futex_wake_all(std::atomic<int>* word);
// Waits while *word == expected, at most timeout_ns. Returns false on timeout.
bool futex_wait(std::atomic<int>* word, int expected, long timeout_ns);

}  // namespace probekit::threads
