// Callback registration: each probe's callback array (desc->runtime) is
// replaced by a copy with the change, published with a release store, and
// the old one retired (internal.h). The first callback opens the in-process
// half of the probe's gate, the last one closes it.
#include "runtime/internal.h"
#include "runtime/own_probes.h"

namespace probekit::rt {

namespace {

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
  own_probe_callback_unregistered(p, old->entries()[i].key);
  retire(s, old);
  return PROBEKIT_OK;
}

}  // namespace

void drop_callbacks(State *s, probekit_probe *p) {
  CallbackArray *a = array_of(p->desc);
  if (!a) return;
  __atomic_fetch_sub(p->desc->gate, kGateOne, __ATOMIC_SEQ_CST);
  publish(p->desc, nullptr);
  for (size_t i = 0; i < a->n; ++i) own_probe_callback_unregistered(p, a->entries()[i].key);
  retire(s, a);
}

}  // namespace probekit::rt

using namespace probekit::rt;

extern "C" {

int probekit_callback_register_if(probekit_probe_v1 *desc, probekit_callback_fn fn, void *data, uint64_t key,
                                  int (*accept)(const probekit_probe *probe, void *data)) {
  if (!desc || !fn) return PROBEKIT_E_INVALID;
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
    own_probe_callback_registered(p, key);
    wait = old != nullptr;
  }
  // Registration needs no grace period to be effective; this only frees
  // the array it replaced.
  reclaim(wait);
  return PROBEKIT_OK;
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
  }
  reclaim(removed > 0);
  return removed;
}

}  // extern "C"
