/* A C translation unit of the end-to-end test: the same generated header,
   so the executable's descriptor range is registered twice. */
#include "e2e_probes.h"

void e2e_c_fire(int fd, const char *path) { E2E_REQ_START_GATED(fd, path); }
void e2e_c_values(signed char a, unsigned short b, float f, double d, int ok, void *p) {
  E2E_VALUES_GATED(a, b, f, d, ok, p);
}
