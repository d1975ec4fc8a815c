// A dlopen()ed object with the same generated header: its own descriptors and
// gates, registered when it loads and unregistered when it unloads.
#include "e2e_probes.h"

extern "C" __attribute__((visibility("default"))) void e2e_module_fire(int fd, const char *path) {
  E2E_REQ_START_GATED(fd, path);
}
extern "C" __attribute__((visibility("default"))) void e2e_module_tick() { E2E_TICK_GATED(); }
