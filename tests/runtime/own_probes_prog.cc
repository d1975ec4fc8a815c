// Makes the runtime fire its own probes (probes/probekit.d) with known
// values, for own_probes.py to watch from gdb: a callback registered and
// unregistered with key 4242 on own:fired, a statedump for key 4243, and a
// thread dump whose length it prints.
#include <probekit/runtime.h>
#include <probekit/threads.h>

#include <cstdio>
#include <cstring>

#include "hand_probes.h"

namespace {
void nothing(const probekit_event *, void *) {}
void dump(uint64_t, void *) {}
}  // namespace

int main() {
  hand::Object o{{"own", "fired", {}}};
  o.load();
  if (probekit_callback_register(o[0], nothing, nullptr, 4242) != PROBEKIT_OK) return 1;
  if (probekit_callback_unregister(o[0], nothing, nullptr, 4242) != PROBEKIT_OK) return 1;
  probekit_statedump *sd = nullptr;
  if (probekit_statedump_register("owndump", dump, nullptr, PROBEKIT_STATEDUMP_POLLING, &sd) != PROBEKIT_OK) return 1;
  if (probekit_statedump_request(4243) != PROBEKIT_OK) return 1;
  if (probekit_statedump_poll(sd) != 1) return 1;
  probekit_statedump_cancel(4243);
  probekit_statedump_unregister(sd);
  static char text[1 << 16];
  if (probekit_threads_dump(text, sizeof text, nullptr, nullptr) != PROBEKIT_OK) return 1;
  std::printf("DUMP %zu\n", std::strlen(text));
  return 0;
}
