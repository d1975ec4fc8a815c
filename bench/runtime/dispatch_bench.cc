// Per-event cost of in-process listeners (issue 5 figures): a C++ typed
// callback on a 2-argument probe against a direct call through a function
// pointer, the C callback, the closed gate, two threads firing the same
// probe, and register/unregister latency while other threads fire.
// Build and run: bench/runtime/run.sh BUILD_DIR
#include <benchmark/benchmark.h>

#include <probekit/runtime.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

namespace {

unsigned gate;
const unsigned char args_blob[] = {1, 0xfc, 'f', 'd', 0, 'i', 'n', 't', 0, 8, 8, 'p', 0, 's', 't', 'r', 'i', 'n', 'g', 0};
probekit_probe_v1 probes[1] = {{1, 2, "bench", "req", &gate, args_blob, "", nullptr}};

long sink;
void target(int fd, const char *p) { benchmark::DoNotOptimize(sink += fd + (p != nullptr)); }
void (*volatile target_ptr)(int, const char *) = target;

void c_callback(const probekit_event *e, void *) {
  benchmark::DoNotOptimize(sink += static_cast<long>(e->args[0]) + (e->args[1] != 0));
}

inline void fire(int fd, const char *p) {
  // What the generated gated site does: one 32-bit load, then the
  // out-of-line call (the marker's NOP aside).
  if (__builtin_expect((__atomic_load_n(&gate, __ATOMIC_RELAXED) >> 16) != 0, 0)) {
    const unsigned long long a[2] = {static_cast<unsigned long long>(static_cast<long long>(fd)),
                                     reinterpret_cast<std::uintptr_t>(p)};
    probekit_dispatch_v1(&probes[0], a);
  }
}

struct Setup {
  Setup() { probekit_register_v1(probes, probes + 1); }
} setup;

void BM_direct_call(benchmark::State &st) {
  int i = 0;
  for (auto _ : st) target_ptr(++i, "x");
}
BENCHMARK(BM_direct_call);

void BM_gate_closed(benchmark::State &st) {
  int i = 0;
  for (auto _ : st) {
    fire(++i, "x");
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_gate_closed);

void BM_typed_callback(benchmark::State &st) {
  static probekit::listener l;
  if (st.thread_index() == 0) l = probekit::listen<int, const char *>(&probes[0], [](int fd, const char *p) { target(fd, p); });
  int i = 0;
  for (auto _ : st) fire(++i, "x");
  st.SetItemsProcessed(st.iterations());
  if (st.thread_index() == 0) l.reset();
}
// items_per_second (all threads together) gives the 2-thread scaling.
BENCHMARK(BM_typed_callback)->Threads(1)->Threads(2)->UseRealTime();

void BM_c_callback(benchmark::State &st) {
  probekit_callback_register(&probes[0], c_callback, nullptr, 0);
  int i = 0;
  for (auto _ : st) fire(++i, "x");
  probekit_callback_unregister(&probes[0], c_callback, nullptr, 0);
}
BENCHMARK(BM_c_callback);

void c_other(const probekit_event *, void *) {}

double percentile(std::vector<double> &v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1))];
}

// Latency of one register and one unregister of a C callback while two
// threads fire the probe (which keeps one listener, so the gate stays open
// and the array is copied on every change). The iteration time is
// register + unregister; the counters are the median and the 99th
// percentile of each, in microseconds.
void BM_register_unregister_while_firing(benchmark::State &st) {
  auto keep = probekit::listen<int, const char *>(&probes[0], [](int fd, const char *p) { target(fd, p); });
  std::atomic<bool> stop{false};
  std::vector<std::thread> firing;
  for (int t = 0; t < 2; ++t) {
    firing.emplace_back([&] {
      int i = 0;
      while (!stop.load(std::memory_order_relaxed)) fire(++i, "x");
    });
  }
  std::vector<double> reg, unreg;
  for (auto _ : st) {
    auto t0 = std::chrono::steady_clock::now();
    probekit_callback_register(&probes[0], c_other, nullptr, 7);
    auto t1 = std::chrono::steady_clock::now();
    probekit_callback_unregister(&probes[0], c_other, nullptr, 7);
    auto t2 = std::chrono::steady_clock::now();
    reg.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    unreg.push_back(std::chrono::duration<double, std::micro>(t2 - t1).count());
  }
  stop = true;
  for (auto &t : firing) t.join();
  st.counters["register_median_us"] = percentile(reg, 0.5);
  st.counters["register_p99_us"] = percentile(reg, 0.99);
  st.counters["unregister_median_us"] = percentile(unreg, 0.5);
  st.counters["unregister_p99_us"] = percentile(unreg, 0.99);
}
BENCHMARK(BM_register_unregister_while_firing)->Iterations(2000)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
