// The opt-in watchdog: a thread that keeps running without marking progress.
#pragma once

#include "runtime/threads/slot.h"

namespace probekit::threads {

// From the capture handler, on the thread's own CPU-time timer (SI_TIMER).
// Async-signal-safe.
void watchdog_tick(Slot& slot);
// Registration and unregistration: arm or delete the thread's timer when the
// watchdog is on.
void watchdog_attach(Slot& slot);
void watchdog_detach(Slot& slot);

}  // namespace probekit::threads
