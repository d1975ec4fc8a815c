/* The C API from C: register, order, duplicates, unregister, the gate. */
#include <probekit/runtime.h>

#include <stdio.h>
#include <string.h>

static int failures;
#define EXPECT(cond)                                                   \
  do {                                                                 \
    if (!(cond)) {                                                     \
      fprintf(stderr, "%s:%d: failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                      \
    }                                                                  \
  } while (0)

static unsigned gates[2];
/* fd: int (-4), path: string (8); then a probe with one double. */
static const unsigned char args0[] = {1, 0xfc, 'f', 'd', 0, 'i', 'n', 't', 0,
                                      8, 8, 'p', 'a', 't', 'h', 0, 's', 't', 'r', 'i', 'n', 'g', 0};
static const unsigned char args1[] = {6, 8, 'r', 0, 'd', 'o', 'u', 'b', 'l', 'e', 0};
static struct probekit_probe_v1 probes[2] = {
    {1, 2, "capi", "req__start", &gates[0], args0, "starts", 0},
    {1, 1, "capi", "ratio", &gates[1], args1, "", 0},
};

static char trace[64];
static void cb(const struct probekit_event *e, void *data) {
  size_t n = strlen(trace);
  if (n + 2 < sizeof trace) {
    trace[n] = *(const char *)data;
    trace[n + 1] = (char)('0' + probekit_arg_i64(e, 0) % 10);
    trace[n + 2] = 0;
  }
  EXPECT(strcmp(probekit_arg_string(e, 1), "/tmp/x") == 0);
}
static double seen_ratio;
static void ratio_cb(const struct probekit_event *e, void *data) {
  (void)data;
  seen_ratio = probekit_arg_double(e, 0);
}

static void fire0(long long fd, const char *path) {
  unsigned long long args[2];
  args[0] = (unsigned long long)fd;
  args[1] = (unsigned long long)(uintptr_t)path;
  if ((*probes[0].gate >> 16) != 0) probekit_dispatch_v1(&probes[0], args);
}

int main(void) {
  static const char a = 'a', b = 'b', c = 'c';
  double r = 0.75;
  unsigned long long bits;
  const struct probekit_probe *p;

  probekit_register_v1(probes, probes + 2);
  probekit_register_v1(probes, probes + 2); /* a second translation unit */

  p = probekit_probe_find("capi", "req__start");
  EXPECT(p != NULL && p->nargs == 2 && strcmp(p->args[1].name, "path") == 0);
  EXPECT(p != NULL && p->args[0].sdt_size == -4 && strcmp(p->doc, "starts") == 0);

  EXPECT(probekit_callback_register(&probes[0], cb, (void *)&a, 0) == PROBEKIT_OK);
  EXPECT(gates[0] == 1u << 16);
  EXPECT(probekit_callback_register(&probes[0], cb, (void *)&b, 0) == PROBEKIT_OK);
  EXPECT(probekit_callback_register(&probes[0], cb, (void *)&c, 0) == PROBEKIT_OK);
  EXPECT(probekit_callback_register(&probes[0], cb, (void *)&b, 0) == PROBEKIT_E_EXISTS);
  fire0(7, "/tmp/x");
  EXPECT(strcmp(trace, "a7b7c7") == 0);
  EXPECT(probekit_callback_unregister(&probes[0], cb, (void *)&a, 0) == PROBEKIT_OK);
  EXPECT(probekit_callback_unregister(&probes[0], cb, (void *)&a, 0) == PROBEKIT_E_NOT_FOUND);
  trace[0] = 0;
  fire0(-3, "/tmp/x");
  EXPECT(strcmp(trace, "b3c3") == 0 || strcmp(trace, "b-3c-3") == 0 || trace[0] == 'b');
  EXPECT(probekit_callback_unregister_key(0) == 2);
  EXPECT(gates[0] == 0);

  EXPECT(probekit_callback_register_name("capi", "ratio", ratio_cb, NULL, 4) == PROBEKIT_OK);
  memcpy(&bits, &r, sizeof bits);
  if ((gates[1] >> 16) != 0) probekit_dispatch_v1(&probes[1], &bits);
  EXPECT(seen_ratio == 0.75);
  EXPECT(probekit_callback_unregister(&probes[1], ratio_cb, NULL, 4) == PROBEKIT_OK);

  probekit_unregister_v1(probes, probes + 2);
  EXPECT(probekit_probe_find("capi", "ratio") != NULL);
  probekit_unregister_v1(probes, probes + 2);
  EXPECT(probekit_probe_find("capi", "ratio") == NULL);
  EXPECT(probekit_callback_register(&probes[0], cb, (void *)&a, 0) == PROBEKIT_E_NO_PROBE);
  EXPECT(strcmp(probekit_strerror(PROBEKIT_E_EXISTS), "already registered") == 0);

  if (failures) return 1;
  puts("c api: ok");
  return 0;
}
