// libprobekit: the registry of loaded probes, callback registration, and the
// lock-free dispatch that gated probe sites call (docs/runtime.md).
//
// Concurrency model
// - Readers (probekit_dispatch_v1) run inside a liburcu-bp read-side critical
//   section: they load desc->runtime (the callback array) and walk it. No
//   lock, no allocation, no write to shared memory: the read lock writes only
//   this thread's liburcu-bp slot, and the depth counter is thread-local.
// - Writers hold g_mutex (recursive: notifications and foreach callbacks may
//   call back into the API), build a new array, publish it with a release
//   store, and retire the old one. The grace period (synchronize_rcu) runs
//   after the mutex is released, so a callback that itself registers or
//   unregisters (and so waits for the mutex) can never deadlock a writer
//   that waits for the callback's read-side section to end.
// - Nothing here has a static constructor: the state is created on first
//   use, so objects may register from their own constructors before ours
//   run (or with no constructor of ours at all).
#include <probekit/runtime.h>

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <new>
#include <vector>

// liburcu is LGPL-2.1: its read-side lock is inlined only when the builder
// opts in (-DPROBEKIT_URCU_INLINE, which defines _LGPL_SOURCE for this file;
// see docs/runtime.md for the cost of the out-of-line calls).
#ifdef PROBEKIT_URCU_INLINE
#define _LGPL_SOURCE 1
#endif
#include <urcu/urcu-bp.h>

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
// the array, release the data). One address stands for "the grace period".
extern "C" void __tsan_acquire(void *addr);
extern "C" void __tsan_release(void *addr);
static char g_tsan_grace;
#define PK_TSAN_READER_DONE() __tsan_release(&g_tsan_grace)
#define PK_TSAN_GRACE_DONE() __tsan_acquire(&g_tsan_grace)
#else
#define PK_TSAN_READER_DONE() ((void)0)
#define PK_TSAN_GRACE_DONE() ((void)0)
#endif

namespace {

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

// Statically initialised: usable before any constructor runs.
pthread_mutex_t g_mutex = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
State *g_state;                // created on first use, never destroyed
pthread_once_t g_atfork_once = PTHREAD_ONCE_INIT;
int g_finalized;               // set by our destructor: later firings are ignored

// Nesting of dispatches on this thread (callbacks that fire probes, signal
// handlers). initial-exec: no allocation on first use, safe in a signal
// handler.
__thread unsigned t_depth __attribute__((tls_model("initial-exec")));
__thread unsigned long long t_dropped __attribute__((tls_model("initial-exec")));
// How many times this thread holds g_mutex (> 1 when a notification or a
// foreach function calls back into the API).
__thread unsigned t_lock_depth __attribute__((tls_model("initial-exec")));

void atfork_prepare() {
  pthread_mutex_lock(&g_mutex);
  urcu_bp_before_fork();
}
void atfork_parent() {
  urcu_bp_after_fork_parent();
  pthread_mutex_unlock(&g_mutex);
}
void atfork_child() {
  urcu_bp_after_fork_child();
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
void install_atfork() { pthread_atfork(atfork_prepare, atfork_parent, atfork_child); }

class Lock {
public:
  Lock() {
    pthread_once(&g_atfork_once, install_atfork);
    pthread_mutex_lock(&g_mutex);
    ++t_lock_depth;
  }
  ~Lock() {
    --t_lock_depth;
    pthread_mutex_unlock(&g_mutex);
  }
  Lock(const Lock &) = delete;
  Lock &operator=(const Lock &) = delete;
};

State *state() {  // under g_mutex
  if (!g_state) g_state = new (std::nothrow) State;
  return g_state;
}

// Under g_mutex: the probe for a descriptor of a registered object, without
// dereferencing desc unless it lies in a live range.
probekit_probe *find_probe(State *s, const probekit_probe_v1 *desc) {
  if (!s || !desc) return nullptr;
  for (Object &o : s->objects) {
    if (desc >= o.begin && desc < o.end) {
      probekit_probe *p = &o.probes[desc - o.begin];
      return p->desc ? p : nullptr;
    }
  }
  return nullptr;
}

void retire(State *s, void *block, void (*release)(void *) = free) {
  if (!block || !release) return;
  try {
    s->retired.push_back({++s->retire_seq, release, block});
  } catch (...) {
    // Out of memory: leaking is safe, freeing early is not.
  }
}

// After the mutex is released: wait for a grace period and free what was
// retired before it started. Skipped (left for a later writer) when called
// from inside a dispatch or a notification, which a grace period would wait
// for.
void reclaim(bool needed) {
  if (!needed || t_depth != 0 || t_lock_depth != 0 || __atomic_load_n(&g_finalized, __ATOMIC_RELAXED)) return;
  unsigned long long upto;
  {
    Lock lock;
    State *s = state();
    if (!s) return;
    upto = s->retire_seq;
  }
  urcu_bp_synchronize_rcu();
  std::vector<Retired> freeing;
  {
    Lock lock;
    State *s = state();
    auto &r = s->retired;
    size_t kept = 0;
    for (size_t i = 0; i < r.size(); ++i) {
      if (r[i].seq <= upto) {
        freeing.push_back(r[i]);
      } else {
        r[kept++] = r[i];
      }
    }
    r.resize(kept);
  }
  PK_TSAN_GRACE_DONE();
  for (const Retired &r : freeing) r.release(r.block);
}

CallbackArray *array_of(const probekit_probe_v1 *desc) {
  return static_cast<CallbackArray *>(__atomic_load_n(&desc->runtime, __ATOMIC_ACQUIRE));
}

CallbackArray *make_array(const probekit_probe *probe, size_t n) {
  void *mem = malloc(sizeof(CallbackArray) + n * sizeof(Entry));
  if (!mem) return nullptr;
  auto *a = static_cast<CallbackArray *>(mem);
  a->probe = probe;
  a->n = n;
  return a;
}

void publish(probekit_probe_v1 *desc, CallbackArray *a) {
  // rcu_assign_pointer: release store, so the entries are visible first.
  __atomic_store_n(&desc->runtime, static_cast<void *>(a), __ATOMIC_RELEASE);
}

// Under g_mutex: replace the probe's array by old minus entry i (or nothing).
int remove_entry(State *s, probekit_probe *p, CallbackArray *old, size_t i) {
  CallbackArray *next = nullptr;
  if (old->n > 1) {
    next = make_array(p, old->n - 1);
    if (!next) return PROBEKIT_E_NO_MEMORY;
    Entry *dst = next->entries();
    const Entry *src = old->entries();
    // Element counts, not bytes (the side.c bug this mirrors would pass
    // counts to a byte copy).
    for (size_t j = 0, k = 0; j < old->n; ++j) {
      if (j != i) dst[k++] = src[j];
    }
  } else {
    // Last callback: close the in-process half of the gate first.
    __atomic_fetch_sub(p->desc->gate, kGateOne, __ATOMIC_SEQ_CST);
  }
  publish(p->desc, next);
  retire(s, old);
  return PROBEKIT_OK;
}

// Parse one descriptor's argument records (docs/note-probekit.md layout).
bool parse_probe(probekit_probe_v1 *d, probekit_probe *out) {
  if (d->abi != 1 || d->nargs > PROBEKIT_MAX_ARGS || !d->provider || !d->name || !d->gate) return false;
  out->desc = d;
  out->provider = d->provider;
  out->name = d->name;
  out->doc = d->doc ? d->doc : "";
  out->nargs = d->nargs;
  const unsigned char *a = d->args;
  for (unsigned i = 0; i < d->nargs; ++i) {
    probekit_arg_info &ai = out->args[i];
    if (!a) {
      ai = {PROBEKIT_ARG_UNTYPED, 8, "", ""};
      continue;
    }
    ai.kind = a[0];
    ai.sdt_size = static_cast<signed char>(a[1]);
    ai.name = reinterpret_cast<const char *>(a + 2);
    a += 2 + strlen(ai.name) + 1;
    ai.type = reinterpret_cast<const char *>(a);
    a += strlen(ai.type) + 1;
    if (ai.kind > PROBEKIT_ARG_STRING) ai.kind = PROBEKIT_ARG_UNTYPED;
  }
  for (unsigned i = d->nargs; i < PROBEKIT_MAX_ARGS; ++i) out->args[i] = {PROBEKIT_ARG_UNTYPED, 0, "", ""};
  return true;
}

void notify_all(State *s, const Object &o, probekit_notification what) {
  // Subscribers may subscribe or unsubscribe from the notification: iterate
  // over a copy.
  std::vector<Subscriber> subs = s->subscribers;
  for (size_t i = 0; i < o.count; ++i) {
    if (!o.probes[i].desc) continue;
    for (const Subscriber &sub : subs) sub.fn(&o.probes[i], what, sub.data);
  }
}

__attribute__((destructor(101))) void finalize() {
  // Runs when libprobekit is unloaded or at exit, before liburcu-bp's own
  // destructor: from now on firings are ignored and writers do not wait for
  // grace periods.
  __atomic_store_n(&g_finalized, 1, __ATOMIC_RELAXED);
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) void probekit_register_v1(probekit_probe_v1 *begin, probekit_probe_v1 *end) {
  if (!begin || end <= begin) return;
  Lock lock;
  State *s = state();
  if (!s) return;
  for (Object &o : s->objects) {
    if (o.begin == begin) {
      ++o.refs;
      return;
    }
  }
  size_t count = static_cast<size_t>(end - begin);
  auto *probes = static_cast<probekit_probe *>(calloc(count, sizeof(probekit_probe)));
  if (!probes) return;
  for (size_t i = 0; i < count; ++i) {
    if (!parse_probe(&begin[i], &probes[i])) probes[i].desc = nullptr;
  }
  try {
    s->objects.push_back({begin, end, 1, probes, count});
  } catch (...) {
    free(probes);
    return;
  }
  Object copy = s->objects.back();
  notify_all(s, copy, PROBEKIT_PROBE_INSERTED);
}

__attribute__((visibility("default"))) void probekit_unregister_v1(probekit_probe_v1 *begin, probekit_probe_v1 *end) {
  (void)end;
  bool wait = false;
  {
    Lock lock;
    State *s = state();
    if (!s) return;
    size_t idx = s->objects.size();
    for (size_t i = 0; i < s->objects.size(); ++i) {
      if (s->objects[i].begin == begin) idx = i;
    }
    if (idx == s->objects.size() || --s->objects[idx].refs != 0) return;
    Object o = s->objects[idx];
    notify_all(s, o, PROBEKIT_PROBE_REMOVED);
    // The object is going away (or the process is exiting): drop its
    // callbacks and close the in-process half of its gates.
    for (size_t i = 0; i < o.count; ++i) {
      probekit_probe *p = &o.probes[i];
      if (!p->desc) continue;
      CallbackArray *a = array_of(p->desc);
      if (a) {
        __atomic_fetch_sub(p->desc->gate, kGateOne, __ATOMIC_SEQ_CST);
        publish(p->desc, nullptr);
        retire(s, a);
      }
    }
    // Notifications may have changed the vector: find the object again.
    for (size_t i = 0; i < s->objects.size(); ++i) {
      if (s->objects[i].begin == begin) {
        s->objects.erase(s->objects.begin() + static_cast<std::ptrdiff_t>(i));
        break;
      }
    }
    retire(s, o.probes);
    wait = true;
  }
  reclaim(wait);
}

__attribute__((visibility("default"))) void probekit_dispatch_v1(probekit_probe_v1 *desc, const unsigned long long *args) {
  if (__builtin_expect(__atomic_load_n(&g_finalized, __ATOMIC_RELAXED), 0)) return;
  unsigned depth = t_depth;
  if (__builtin_expect(depth >= PROBEKIT_MAX_DEPTH, 0)) {
    ++t_dropped;
    return;
  }
  t_depth = depth + 1;
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  urcu_bp_read_lock();
  const CallbackArray *a = array_of(desc);
  if (a) {
    probekit_event ev{a->probe, args};
    const Entry *e = a->entries();
    for (size_t i = 0, n = a->n; i < n; ++i) e[i].fn(&ev, e[i].data);
    PK_TSAN_READER_DONE();
  }
  urcu_bp_read_unlock();
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  t_depth = depth;
}

// ---- public API ----

const char *probekit_strerror(int status) {
  switch (status) {
    case PROBEKIT_OK: return "success";
    case PROBEKIT_E_INVALID: return "invalid argument";
    case PROBEKIT_E_NO_PROBE: return "no such probe";
    case PROBEKIT_E_EXISTS: return "already registered";
    case PROBEKIT_E_NOT_FOUND: return "no such registration";
    case PROBEKIT_E_NO_MEMORY: return "out of memory";
    case PROBEKIT_E_TYPE: return "callback types do not fit the probe's arguments";
    case PROBEKIT_E_FULL: return "gate count saturated";
    default: return "unknown status";
  }
}

const probekit_probe *probekit_probe_find(const char *provider, const char *name) {
  if (!provider || !name) return nullptr;
  Lock lock;
  State *s = state();
  if (!s) return nullptr;
  for (const Object &o : s->objects) {
    for (size_t i = 0; i < o.count; ++i) {
      const probekit_probe &p = o.probes[i];
      if (p.desc && strcmp(p.provider, provider) == 0 && strcmp(p.name, name) == 0) return &p;
    }
  }
  return nullptr;
}

const probekit_probe *probekit_probe_lookup(const probekit_probe_v1 *desc) {
  Lock lock;
  return find_probe(state(), desc);
}

size_t probekit_probe_foreach(int (*fn)(const probekit_probe *probe, void *data), void *data) {
  if (!fn) return 0;
  Lock lock;
  State *s = state();
  if (!s) return 0;
  size_t calls = 0;
  // By index: fn may load or unload objects through the API.
  for (size_t oi = 0; oi < s->objects.size(); ++oi) {
    for (size_t i = 0; oi < s->objects.size() && i < s->objects[oi].count; ++i) {
      const probekit_probe &p = s->objects[oi].probes[i];
      if (!p.desc) continue;
      ++calls;
      if (fn(&p, data) != 0) return calls;
    }
  }
  return calls;
}

int probekit_subscribe(probekit_notify_fn fn, void *data) {
  if (!fn) return PROBEKIT_E_INVALID;
  Lock lock;
  State *s = state();
  if (!s) return PROBEKIT_E_NO_MEMORY;
  for (const Subscriber &sub : s->subscribers) {
    if (sub.fn == fn && sub.data == data) return PROBEKIT_E_EXISTS;
  }
  try {
    s->subscribers.push_back({fn, data});
  } catch (...) {
    return PROBEKIT_E_NO_MEMORY;
  }
  for (size_t oi = 0; oi < s->objects.size(); ++oi) {
    for (size_t i = 0; oi < s->objects.size() && i < s->objects[oi].count; ++i) {
      const probekit_probe &p = s->objects[oi].probes[i];
      if (p.desc) fn(&p, PROBEKIT_PROBE_INSERTED, data);
    }
  }
  return PROBEKIT_OK;
}

int probekit_unsubscribe(probekit_notify_fn fn, void *data) {
  Lock lock;
  State *s = state();
  if (!s) return PROBEKIT_E_NOT_FOUND;
  for (size_t i = 0; i < s->subscribers.size(); ++i) {
    if (s->subscribers[i].fn == fn && s->subscribers[i].data == data) {
      s->subscribers.erase(s->subscribers.begin() + static_cast<std::ptrdiff_t>(i));
      return PROBEKIT_OK;
    }
  }
  return PROBEKIT_E_NOT_FOUND;
}

int probekit_callback_register_if(probekit_probe_v1 *desc, probekit_callback_fn fn, void *data, uint64_t key,
                                  int (*accept)(const probekit_probe *probe, void *data)) {
  if (!desc || !fn) return PROBEKIT_E_INVALID;
  int status = PROBEKIT_OK;
  bool wait = false;
  {
    Lock lock;
    State *s = state();
    probekit_probe *p = find_probe(s, desc);
    if (!p) return PROBEKIT_E_NO_PROBE;
    if (accept) {
      if (int rc = accept(p, data); rc != 0) return rc;
    }
    CallbackArray *old = array_of(desc);
    size_t n = old ? old->n : 0;
    if (old) {
      for (size_t i = 0; i < n; ++i) {
        const Entry &e = old->entries()[i];
        if (e.fn == fn && e.data == data && e.key == key) return PROBEKIT_E_EXISTS;
      }
    } else if ((__atomic_load_n(desc->gate, __ATOMIC_RELAXED) >> 16) == 0xffffu) {
      return PROBEKIT_E_FULL;
    }
    CallbackArray *next = make_array(p, n + 1);
    if (!next) return PROBEKIT_E_NO_MEMORY;
    Entry *dst = next->entries();
    for (size_t i = 0; i < n; ++i) dst[i] = old->entries()[i];
    dst[n] = {fn, data, key};
    publish(desc, next);
    if (old) {
      retire(s, old);
    } else {
      // First callback: the array is visible before the gate opens.
      __atomic_fetch_add(desc->gate, kGateOne, __ATOMIC_SEQ_CST);
    }
    wait = old != nullptr;
  }
  // Registration needs no grace period to be effective; this only frees
  // the array it replaced.
  reclaim(wait);
  return status;
}

int probekit_callback_register(probekit_probe_v1 *desc, probekit_callback_fn fn, void *data, uint64_t key) {
  return probekit_callback_register_if(desc, fn, data, key, nullptr);
}

int probekit_callback_register_name(const char *provider, const char *name, probekit_callback_fn fn, void *data,
                                    uint64_t key) {
  probekit_probe_v1 *desc = nullptr;
  {
    Lock lock;
    const probekit_probe *p = probekit_probe_find(provider, name);
    if (!p) return PROBEKIT_E_NO_PROBE;
    desc = p->desc;
  }
  // If the object unloads in between, register finds no probe: it checks
  // the descriptor against the live ranges before touching it.
  return probekit_callback_register(desc, fn, data, key);
}

int probekit_callback_unregister_release(probekit_probe_v1 *desc, probekit_callback_fn fn, void *data, uint64_t key,
                                         void (*release)(void *data)) {
  if (!desc || !fn) return PROBEKIT_E_INVALID;
  int status = PROBEKIT_E_NOT_FOUND;
  {
    Lock lock;
    State *s = state();
    if (!s) return PROBEKIT_E_NO_MEMORY;
    probekit_probe *p = find_probe(s, desc);
    if (!p) {
      status = PROBEKIT_E_NO_PROBE;
    } else {
      CallbackArray *old = array_of(desc);
      for (size_t i = 0; old && i < old->n; ++i) {
        const Entry &e = old->entries()[i];
        if (e.fn == fn && e.data == data && e.key == key) {
          status = remove_entry(s, p, old, i);
          break;
        }
      }
    }
    if (status == PROBEKIT_E_NO_MEMORY) return status;
    // The data is released after the grace period that also retires the
    // array, whether the registration was there or already dropped (object
    // unloaded, unregister_key).
    retire(s, data, release);
  }
  reclaim(status == PROBEKIT_OK || release != nullptr);
  return status;
}

int probekit_callback_unregister(probekit_probe_v1 *desc, probekit_callback_fn fn, void *data, uint64_t key) {
  return probekit_callback_unregister_release(desc, fn, data, key, nullptr);
}

int probekit_callback_unregister_key(uint64_t key) {
  int removed = 0;
  bool wait = false;
  {
    Lock lock;
    State *s = state();
    if (!s) return 0;
    for (Object &o : s->objects) {
      for (size_t i = 0; i < o.count; ++i) {
        probekit_probe *p = &o.probes[i];
        if (!p->desc) continue;
        for (;;) {
          CallbackArray *a = array_of(p->desc);
          size_t j = 0;
          while (a && j < a->n && a->entries()[j].key != key) ++j;
          if (!a || j == a->n) break;
          if (remove_entry(s, p, a, j) != PROBEKIT_OK) break;
          ++removed;
        }
      }
    }
    wait = removed > 0;
  }
  reclaim(wait);
  return removed;
}

void probekit_synchronize(void) {
  if (t_depth != 0 || t_lock_depth != 0) return;
  urcu_bp_synchronize_rcu();
  reclaim(true);
}

unsigned long long probekit_thread_dropped(void) { return t_dropped; }

}  // extern "C"
