// The read side: what a gated probe site calls while its gate's in-process
// half is open. No lock, no allocation, no write to shared memory
// (internal.h, docs/runtime.md).
#include "runtime/internal.h"
#include "runtime/own_probes.h"

// liburcu is LGPL-2.1: its read-side lock is inlined only when the builder
// opts in (-DPROBEKIT_URCU_INLINE, which defines _LGPL_SOURCE for this file;
// see docs/runtime.md for the cost of the out-of-line calls).
#ifdef PROBEKIT_URCU_INLINE
#define _LGPL_SOURCE 1
#endif
#include <urcu/urcu-bp.h>

namespace probekit::rt {

__thread unsigned t_depth __attribute__((tls_model("initial-exec")));
__thread bool t_dumping __attribute__((tls_model("initial-exec")));
__thread uint64_t t_dump_key __attribute__((tls_model("initial-exec")));

namespace {
__thread unsigned long long t_dropped __attribute__((tls_model("initial-exec")));
}  // namespace

}  // namespace probekit::rt

using namespace probekit::rt;

extern "C" {

__attribute__((visibility("default"))) void probekit_dispatch_v1(probekit_probe_v1 *desc, const unsigned long long *args) {
  if (__builtin_expect(finalized(), 0)) return;
  unsigned depth = t_depth;
  if (__builtin_expect(depth != 0, 0)) {
    if (depth >= PROBEKIT_MAX_DEPTH) {
      ++t_dropped;
      return;
    }
    if (is_own_probe(desc)) return;
  }
  t_depth = depth + 1;
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  urcu_bp_read_lock();
  const CallbackArray *a = array_of(desc);
  if (a) {
    probekit_event ev{a->probe, args};
    const Entry *e = a->entries();
    if (__builtin_expect(!t_dumping, 1)) {
      for (size_t i = 0, n = a->n; i < n; ++i) e[i].fn(&ev, e[i].data);
    } else {
      const uint64_t key = t_dump_key;
      for (size_t i = 0, n = a->n; i < n; ++i) {
        if (e[i].key == key) e[i].fn(&ev, e[i].data);
      }
    }
    PK_TSAN_READER_DONE();
  }
  urcu_bp_read_unlock();
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  t_depth = depth;
}

unsigned long long probekit_thread_dropped(void) { return t_dropped; }

}  // extern "C"
