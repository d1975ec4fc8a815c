// The runtime's own probes (probes/probekit.d), fired where the runtime
// changes state. Gated: a call costs one load while nobody listens.
#ifndef PROBEKIT_SRC_RUNTIME_OWN_PROBES_H
#define PROBEKIT_SRC_RUNTIME_OWN_PROBES_H

#include <probekit/runtime.h>

namespace probekit::rt {

void own_probe_callback_registered(const probekit_probe *p, uint64_t key);
void own_probe_callback_unregistered(const probekit_probe *p, uint64_t key);
void own_probe_inserted(const probekit_probe *p);
void own_probe_removed(const probekit_probe *p);
void own_probe_statedump_begin(const char *name, uint64_t key);
void own_probe_statedump_end(const char *name, uint64_t key);
// Fired by every finished thread dump (threads/dump.cc publish_dump).
void own_probe_thread_dump(const char *text, uint64_t length, int32_t threads);

// Whether desc is one of these probes. The runtime does not dispatch them
// in-process from inside a callback (dispatch.cc), so a listener on them that
// calls the runtime cannot recurse into itself; external tracers still see
// every firing (the site's NOP).
bool is_own_probe(const probekit_probe_v1 *desc);

}  // namespace probekit::rt

#endif  // PROBEKIT_SRC_RUNTIME_OWN_PROBES_H
