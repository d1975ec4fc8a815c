// Stress: threads firing probes in tight loops while another thread registers
// and unregisters callbacks. Every invocation must be on a live registration
// (its 'alive' flag is set before registering and cleared only after
// unregister returns) and none may be lost once registration has returned.
// A fork happens during the storm. Also runs under TSan (docs/runtime.md).
//
// PROBEKIT_STRESS_SECONDS sets the duration (default 2).
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <thread>
#include <vector>

#include "hand_probes.h"

namespace {

constexpr int kFiringThreads = 2;
constexpr int kSlots = 6;

struct alignas(64) Counter {
  std::atomic<unsigned long> value{0};
};

struct Slot {
  std::atomic<bool> alive{false};
  std::atomic<long> calls{0};
  std::atomic<bool> seen[kFiringThreads];
  probekit_probe_v1 *probe = nullptr;
  bool registered = false;
};

std::atomic<long> g_dead_calls{0};
Counter g_iterations[kFiringThreads];
thread_local int t_index = -1;

void cb(const probekit_event *e, void *data) {
  auto *s = static_cast<Slot *>(data);
  if (!s->alive.load(std::memory_order_acquire)) g_dead_calls.fetch_add(1);
  s->calls.fetch_add(1, std::memory_order_relaxed);
  if (t_index >= 0) s->seen[t_index].store(true, std::memory_order_relaxed);
  (void)e;
}

double seconds_from_env() {
  const char *s = std::getenv("PROBEKIT_STRESS_SECONDS");
  double v = s ? std::atof(s) : 2.0;
  return v > 0 ? v : 2.0;
}

}  // namespace

int main() {
  hand::Object o{{"stress", "a", {{PROBEKIT_ARG_SIGNED, -4, "v", "int"}}},
                 {"stress", "b", {{PROBEKIT_ARG_SIGNED, -4, "v", "int"}}}};
  o.load();
  o.load();  // two translation units

  std::atomic<bool> stop{false};
  std::vector<std::thread> firing;
  for (int t = 0; t < kFiringThreads; ++t) {
    firing.emplace_back([&, t] {
      t_index = t;
      unsigned long i = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        hand::fire(o[0], static_cast<int>(i));
        hand::fire(o[1], static_cast<int>(i));
        ++i;
        g_iterations[t].value.store(i, std::memory_order_release);
      }
    });
  }

  Slot slots[kSlots];
  std::mt19937 rng(12345);
  long registrations = 0, lost = 0, errors = 0, forks = 0;
  const auto start = std::chrono::steady_clock::now();
  const double duration = seconds_from_env();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  bool forked = false;
  while (elapsed() < duration) {
    Slot &s = slots[rng() % kSlots];
    if (!s.registered) {
      s.probe = o[rng() % 2];
      for (auto &f : s.seen) f.store(false);
      s.alive.store(true, std::memory_order_release);
      if (probekit_callback_register(s.probe, cb, &s, 1) != PROBEKIT_OK) {
        ++errors;
        continue;
      }
      s.registered = true;
      ++registrations;
      // None lost: each firing thread completes an iteration that started
      // after registration returned, so it must have called us.
      unsigned long mark[kFiringThreads];
      for (int t = 0; t < kFiringThreads; ++t) mark[t] = g_iterations[t].value.load(std::memory_order_acquire);
      for (int t = 0; t < kFiringThreads; ++t) {
        while (g_iterations[t].value.load(std::memory_order_acquire) < mark[t] + 2) std::this_thread::yield();
        if (!s.seen[t].load(std::memory_order_relaxed)) ++lost;
      }
    } else {
      if (probekit_callback_unregister(s.probe, cb, &s, 1) != PROBEKIT_OK) ++errors;
      s.alive.store(false, std::memory_order_release);  // only now
      s.registered = false;
    }
    if (!forked && elapsed() > duration / 2) {
      forked = true;
      ++forks;
      pid_t pid = fork();
      if (pid == 0) {
        alarm(20);
        // The child has only this thread: fire, register, unregister.
        static Slot mine;
        mine.alive = true;
        if (probekit_callback_register(o[0], cb, &mine, 2) != PROBEKIT_OK) _exit(1);
        hand::fire(o[0], 1);
        if (mine.calls.load() != 1) _exit(2);
        if (probekit_callback_unregister(o[0], cb, &mine, 2) != PROBEKIT_OK) _exit(3);
        _exit(g_dead_calls.load() == 0 ? 0 : 4);
      }
      int status = 0;
      waitpid(pid, &status, 0);
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        std::fprintf(stderr, "fork child failed: status %d\n", status);
        ++errors;
      }
    }
  }
  for (Slot &s : slots) {
    if (s.registered && probekit_callback_unregister(s.probe, cb, &s, 1) != PROBEKIT_OK) ++errors;
    s.alive.store(false, std::memory_order_release);
  }
  // Firing continues a little with every callback gone: any call now is on a
  // dead registration.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  stop = true;
  for (auto &t : firing) t.join();

  unsigned long iterations = 0;
  for (auto &c : g_iterations) iterations += c.value.load();
  long calls = 0;
  for (Slot &s : slots) calls += s.calls.load();
  std::printf("%.1f s: %ld registrations, %lu firing iterations, %ld callback calls, %ld forks; "
              "%ld dead calls, %ld lost, %ld errors\n",
              elapsed(), registrations, iterations, calls, forks, g_dead_calls.load(), lost, errors);
  bool ok = g_dead_calls.load() == 0 && lost == 0 && errors == 0 && registrations > 10 && o.gate(0) == 0 &&
            o.gate(1) == 0;
  o.unload();
  o.unload();
  std::puts(ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
