// Probes and listeners from static constructors, before main: the runtime
// initialises itself on first use.
#include "e2e_probes.h"

#include <probekit/runtime.hpp>

int e2e_ctor_calls;
int e2e_ctor_status = 1;

namespace {
struct Early {
  probekit::listener l;
  Early() {
    l = probekit::listen<int>("e2e", "ctor", [](int n) { e2e_ctor_calls += n; });
    e2e_ctor_status = l.status();
    E2E_CTOR_GATED(1);
    E2E_CTOR_GATED(2);
  }
};
Early early;
}  // namespace

void e2e_ctor_fire(int n) { E2E_CTOR_GATED(n); }
