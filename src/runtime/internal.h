// libprobekit internals shared by the runtime's files (docs/runtime.md).
//
// Concurrency model
// - Readers (probekit_dispatch_v1, dispatch.cc) run inside a liburcu-bp
//   read-side critical section: they load desc->runtime (the callback array)
//   and walk it. No lock, no allocation, no write to shared memory: the read
//   lock writes only this thread's liburcu-bp slot, and the depth counter is
//   thread-local.
// - Writers (registry.cc, callbacks.cc) hold g_mutex (recursive:
//   notifications and foreach callbacks may call back into the API), build a
//   new array, publish it with a release store, and retire the old one. The
//   grace period (reclaim.cc) runs after the mutex is released, so a callback
//   that itself registers or unregisters (and so waits for the mutex) can
//   never deadlock a writer that waits for the callback's read-side section.
// - Nothing here has a static constructor: the state is created on first
//   use, so objects may register from their own constructors before ours
//   run (or with no constructor of ours at all).
#ifndef PROBEKIT_SRC_RUNTIME_INTERNAL_H
#define PROBEKIT_SRC_RUNTIME_INTERNAL_H

#include <probekit/runtime.h>

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <vector>

namespace probekit::rt {

constexpr unsigned kGateOne = 1u << 16;

struct Entry {
  probekit_callback_fn fn;
  void *data;
  uint64_t key;
};

// What desc->runtime points to: the probe's callbacks, immutable once
// published. Allocated as one block: the header, then n entries.
struct CallbackArray {
  const probekit_probe *probe;
  size_t n;
  Entry *entries() { return reinterpret_cast<Entry *>(this + 1); }
  const Entry *entries() const { return reinterpret_cast<const Entry *>(this + 1); }
};
static_assert(alignof(Entry) <= alignof(CallbackArray));

// One loaded object's descriptor range.
struct Object {
  probekit_probe_v1 *begin;
  probekit_probe_v1 *end;
  unsigned refs;               // translation units that registered it
  probekit_probe *probes;      // one per descriptor, probes[i].desc null when invalid
  size_t count;
};

struct Subscriber {
  probekit_notify_fn fn;
  void *data;
};

// Freed after a grace period: a CallbackArray, an Object's probes (free),
// or a listener's data (its release function).
struct Retired {
  unsigned long long seq;
  void (*release)(void *);
  void *block;
};

struct State {
  std::vector<Object> objects;
  std::vector<Subscriber> subscribers;
  std::vector<Retired> retired;
  unsigned long long retire_seq = 0;
};

// ---- lock.cc: the writers' mutex and the state it guards ----

// Holds g_mutex (recursive) for a scope; installs the fork handlers on
// first use.
class Lock {
public:
  Lock();
  ~Lock();
  Lock(const Lock &) = delete;
  Lock &operator=(const Lock &) = delete;
};

State *state();  // under a Lock; null when it cannot be allocated

// How many times this thread holds g_mutex (> 1 when a notification or a
// foreach function calls back into the API).
extern __thread unsigned t_lock_depth __attribute__((tls_model("initial-exec")));

// ---- lifecycle.cc: fork and finalisation ----

void install_atfork_once();
// Set by the runtime's destructor: later firings are ignored and writers do
// not wait for grace periods.
extern int g_finalized;
inline bool finalized() { return __atomic_load_n(&g_finalized, __ATOMIC_RELAXED) != 0; }
// fork handlers of lock.cc (the mutex itself) and statedump.cc (its mutex,
// condition variables and agent thread).
void lock_before_fork();
void lock_after_fork_parent();
void lock_after_fork_child();
void statedump_before_fork();
void statedump_after_fork_parent();
void statedump_after_fork_child();
// Finalisation of statedump.cc: stop the agent thread.
void statedump_finalize();

// ---- dispatch.cc ----

// Nesting of dispatches on this thread (callbacks that fire probes, signal
// handlers). initial-exec: no allocation on first use, safe in a signal
// handler.
extern __thread unsigned t_depth __attribute__((tls_model("initial-exec")));
// While this thread runs a statedump provider (statedump.cc), the probes it
// fires reach only the callbacks registered with the dump's key.
extern __thread bool t_dumping __attribute__((tls_model("initial-exec")));
extern __thread uint64_t t_dump_key __attribute__((tls_model("initial-exec")));

inline CallbackArray *array_of(const probekit_probe_v1 *desc) {
  return static_cast<CallbackArray *>(__atomic_load_n(&desc->runtime, __ATOMIC_ACQUIRE));
}

// ---- reclaim.cc: grace periods ----

// Under g_mutex: free block with release after the next grace period.
void retire(State *s, void *block, void (*release)(void *) = free);
// After the mutex is released: wait for a grace period and free what was
// retired before it started (when needed and possible).
void reclaim(bool needed);

// ---- registry.cc ----

// Under g_mutex: the probe for a descriptor of a registered object, without
// dereferencing desc unless it lies in a live range.
probekit_probe *find_probe(State *s, const probekit_probe_v1 *desc);

// ---- callbacks.cc ----

// Under g_mutex: drop every callback of the probe and close the in-process
// half of its gate (its object is unloading).
void drop_callbacks(State *s, probekit_probe *p);

}  // namespace probekit::rt

#if defined(__SANITIZE_THREAD__)
#define PROBEKIT_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define PROBEKIT_TSAN 1
#endif
#endif

#ifdef PROBEKIT_TSAN
// liburcu is not instrumented: tell TSan that a grace period orders what
// every reader did in its read-side section (walking an array, calling a
// callback that reads its data) before what the writer does after it (free
// the array, release the data). One address (reclaim.cc) stands for "the
// grace period".
extern "C" void __tsan_acquire(void *addr);
extern "C" void __tsan_release(void *addr);
namespace probekit::rt {
extern char g_tsan_grace;
}
#define PK_TSAN_READER_DONE() __tsan_release(&::probekit::rt::g_tsan_grace)
#define PK_TSAN_GRACE_DONE() __tsan_acquire(&::probekit::rt::g_tsan_grace)
#else
#define PK_TSAN_READER_DONE() ((void)0)
#define PK_TSAN_GRACE_DONE() ((void)0)
#endif

#endif  // PROBEKIT_SRC_RUNTIME_INTERNAL_H
