// Grace periods: memory a writer replaced (callback arrays, an unloaded
// object's probes, a listener's data) is freed once no reader can still see
// it (internal.h).
#include "runtime/internal.h"

#include <urcu/urcu-bp.h>

namespace probekit::rt {

#ifdef PROBEKIT_TSAN
char g_tsan_grace;
#endif

void retire(State *s, void *block, void (*release)(void *)) {
  if (!block || !release) return;
  try {
    s->retired.push_back({++s->retire_seq, release, block});
  } catch (...) {
    // Out of memory: leaking is safe, freeing early is not.
  }
}

// Skipped (left for a later writer) when called from inside a dispatch or a
// notification, which a grace period would wait for.
void reclaim(bool needed) {
  if (!needed || t_depth != 0 || t_lock_depth != 0 || finalized()) return;
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

}  // namespace probekit::rt

extern "C" void probekit_synchronize(void) {
  using namespace probekit::rt;
  if (t_depth != 0 || t_lock_depth != 0) return;
  urcu_bp_synchronize_rcu();
  reclaim(true);
}
