// The runtime's own probes: the header generated from probes/probekit.d by
// this build's `probekit compile` (meson.build). Including it makes
// libprobekit register its own descriptors like any instrumented object.
#include "runtime/own_probes.h"

#include <string.h>

#include "probekit_probes.h"

namespace probekit::rt {

void own_probe_callback_registered(const probekit_probe *p, uint64_t key) {
  PROBEKIT_CALLBACK_REGISTERED_GATED(p->provider, p->name, key);
}

void own_probe_callback_unregistered(const probekit_probe *p, uint64_t key) {
  PROBEKIT_CALLBACK_UNREGISTERED_GATED(p->provider, p->name, key);
}

void own_probe_inserted(const probekit_probe *p) { PROBEKIT_PROBE_INSERT_GATED(p->provider, p->name); }

void own_probe_removed(const probekit_probe *p) { PROBEKIT_PROBE_REMOVE_GATED(p->provider, p->name); }

void own_probe_statedump_begin(const char *name, uint64_t key) { PROBEKIT_STATEDUMP_BEGIN_GATED(name, key); }

void own_probe_statedump_end(const char *name, uint64_t key) { PROBEKIT_STATEDUMP_END_GATED(name, key); }

void own_probe_thread_dump(const char *text, uint64_t length, int32_t threads) {
  PROBEKIT_THREAD_DUMP_GATED(text, length, threads);
}

bool is_own_probe(const probekit_probe_v1 *desc) { return strcmp(desc->provider, "probekit") == 0; }

}  // namespace probekit::rt
