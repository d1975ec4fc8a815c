// The writers' mutex and the registry state it guards (internal.h).
#include "runtime/internal.h"

#include <new>

namespace probekit::rt {

namespace {
// Statically initialised: usable before any constructor runs.
pthread_mutex_t g_mutex = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
State *g_state;  // created on first use, never destroyed
}  // namespace

__thread unsigned t_lock_depth __attribute__((tls_model("initial-exec")));

Lock::Lock() {
  install_atfork_once();
  pthread_mutex_lock(&g_mutex);
  ++t_lock_depth;
}

Lock::~Lock() {
  --t_lock_depth;
  pthread_mutex_unlock(&g_mutex);
}

State *state() {
  if (!g_state) g_state = new (std::nothrow) State;
  return g_state;
}

void lock_before_fork() { pthread_mutex_lock(&g_mutex); }

void lock_after_fork_parent() { pthread_mutex_unlock(&g_mutex); }

void lock_after_fork_child() {
  // The prepare handler locked the mutex; in the child the thread has
  // another id, so unlocking a recursive mutex would fail: make a new one,
  // held as many times as this thread held it before the fork (fork from a
  // notification), so that its Lock destructors balance.
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
  pthread_mutex_init(&g_mutex, &attr);
  pthread_mutexattr_destroy(&attr);
  for (unsigned i = 0; i < t_lock_depth; ++i) pthread_mutex_lock(&g_mutex);
}

}  // namespace probekit::rt
