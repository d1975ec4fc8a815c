// For callgrind (bench/runtime/run.sh): N events through one C++ typed
// callback on a 2-argument probe (work_typed), against N direct calls of the
// same function through a function pointer (work_direct).
#include <probekit/runtime.hpp>

#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace {

unsigned gate;
const unsigned char args_blob[] = {1, 0xfc, 'f', 'd', 0, 'i', 'n', 't', 0, 8, 8, 'p', 0, 's', 't', 'r', 'i', 'n', 'g', 0};
probekit_probe_v1 probes[1] = {{1, 2, "bench", "req", &gate, args_blob, "", nullptr}};

volatile long sink;
__attribute__((noinline)) void target(int fd, const char *p) { sink = sink + fd + (p != nullptr); }
void (*volatile target_ptr)(int, const char *) = target;

}  // namespace

extern "C" __attribute__((noinline)) void work_direct(long n) {
  for (long i = 0; i < n; ++i) target_ptr(static_cast<int>(i), "x");
}

extern "C" __attribute__((noinline)) void work_typed(long n) {
  for (long i = 0; i < n; ++i) {
    // What the generated gated site does.
    if (__builtin_expect((__atomic_load_n(&gate, __ATOMIC_RELAXED) >> 16) != 0, 0)) {
      const unsigned long long a[2] = {static_cast<unsigned long long>(i), reinterpret_cast<std::uintptr_t>("x")};
      probekit_dispatch_v1(&probes[0], a);
    }
  }
}

int main(int argc, char **argv) {
  probekit_register_v1(probes, probes + 1);
  auto l = probekit::listen<int, const char *>(&probes[0], [](int fd, const char *p) { target(fd, p); });
  if (!l) return 1;
  long n = argc > 2 ? atol(argv[2]) : 1000000;
  work_typed(1);  // the thread's first read lock registers it with liburcu-bp: not measured
  if (argc > 1 && strcmp(argv[1], "direct") == 0) {
    work_direct(n);
  } else {
    work_typed(n);
  }
  return 0;
}
