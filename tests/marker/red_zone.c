#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rz.h"

/* Leaf functions that keep values in the red zone (volatile locals, no
   calls) around a probe site. */
#define LEAF(name, FIRE)                                        \
  __attribute__((noinline)) long name(long a, long b) {         \
    volatile long x = a * 3, y = b * 5, z = a ^ b;              \
    FIRE;                                                       \
    return x + y + z;                                           \
  }
LEAF(leaf_plain, RZ_PLAIN(a))
LEAF(leaf_gated, RZ_GATED_GATED(a))
/* The control: a 5-byte NOP placed inline in a leaf, which probekit never
   does. Under a tracer on Linux 6.18+ it corrupts the red zone. */
LEAF(leaf_unsafe, PROBEKIT_SITE1(PROBEKIT_NOP5, rz, unsafe, a, -8))

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 1000000;
  const char *which = argc > 2 ? argv[2] : "plain";
  long (*f)(long, long) = !strcmp(which, "gated") ? leaf_gated : !strcmp(which, "unsafe") ? leaf_unsafe : leaf_plain;
  long bad = 0;
  for (long i = 0; i < n; ++i)
    if (f(i, i + 1) != i * 3 + (i + 1) * 5 + (i ^ (i + 1))) ++bad;
  printf("%ld wrong of %ld\n", bad, n);
  return bad != 0;
}
