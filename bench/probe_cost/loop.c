/* The loop that the probe-cost benchmarks run: `loop N VARIANT`.
   VARIANT: none, plain, gated (probekit header), sdt (sys/sdt.h STAP_PROBE2),
   sdt_enabled (SystemTap's `if (PROBE_ENABLED()) PROBE(...)` idiom).
   Prints the loop's wall time per iteration in nanoseconds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_probes.h"   /* probekit compile: BENCH_HIT, BENCH_HIT_GATED */
#include "sdt_probes.h"     /* probekit-dtrace -h (SystemTap's header): SDT_HIT */

#define LOOP(name, FIRE)                                   \
  __attribute__((noinline)) long name(long n) {            \
    long s = 0;                                            \
    for (long i = 0; i < n; ++i) {                         \
      s += i ^ (s >> 3);                                   \
      FIRE;                                                \
    }                                                      \
    return s;                                              \
  }

LOOP(work_none, (void)0)
LOOP(work_plain, BENCH_HIT(i, s))
LOOP(work_gated, BENCH_HIT_GATED(i, s))
LOOP(work_sdt, SDT_HIT(i, s))
LOOP(work_sdt_enabled, if (SDT_HIT_ENABLED()) SDT_HIT(i, s))

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 10000000;
  const char *v = argc > 2 ? argv[2] : "none";
  long (*f)(long) = !strcmp(v, "plain") ? work_plain : !strcmp(v, "gated") ? work_gated
                  : !strcmp(v, "sdt") ? work_sdt : !strcmp(v, "sdt_enabled") ? work_sdt_enabled : work_none;
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  long s = f(n);
  clock_gettime(CLOCK_MONOTONIC, &b);
  double ns = ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / (double)n;
  printf("%s %.3f ns/iter (checksum %ld)\n", v, ns, s);
  return 0;
}
