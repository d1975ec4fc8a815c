// The runtime's life cycle: fork handlers and finalisation (docs/runtime.md).
// There is no constructor: the state is created on first use (lock.cc).
#include "runtime/internal.h"

#include <urcu/urcu-bp.h>

namespace probekit::rt {

int g_finalized;

namespace {

pthread_once_t g_atfork_once = PTHREAD_ONCE_INIT;

// No other thread holds the registry mutex or liburcu-bp's locks at the
// instant of the fork, so the child inherits neither held.
// Lock order: registry mutex, statedump mutex, liburcu-bp.
void atfork_prepare() {
  lock_before_fork();
  statedump_before_fork();
  urcu_bp_before_fork();
}
void atfork_parent() {
  urcu_bp_after_fork_parent();
  statedump_after_fork_parent();
  lock_after_fork_parent();
}
void atfork_child() {
  urcu_bp_after_fork_child();
  statedump_after_fork_child();
  lock_after_fork_child();
}
void install_atfork() { pthread_atfork(atfork_prepare, atfork_parent, atfork_child); }

__attribute__((destructor(101))) void finalize() {
  // Runs when libprobekit is unloaded or at exit, before liburcu-bp's own
  // destructor: from now on firings are ignored and writers do not wait for
  // grace periods.
  __atomic_store_n(&g_finalized, 1, __ATOMIC_RELAXED);
  statedump_finalize();
}

}  // namespace

void install_atfork_once() { pthread_once(&g_atfork_once, install_atfork); }

}  // namespace probekit::rt
