// The registry: which objects' probe descriptors are loaded (registered by
// their generated headers' constructors, runtime_abi.h), the parsed view of
// each probe, enumeration and insert/remove notifications.
#include "runtime/internal.h"
#include "runtime/own_probes.h"

#include <string.h>

namespace probekit::rt {

namespace {

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

}  // namespace

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

}  // namespace probekit::rt

using namespace probekit::rt;

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
  for (size_t i = 0; i < count; ++i) {
    if (probes[i].desc) own_probe_inserted(&probes[i]);
  }
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
      if (!o.probes[i].desc) continue;
      drop_callbacks(s, &o.probes[i]);
      own_probe_removed(&o.probes[i]);
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

}  // extern "C"
