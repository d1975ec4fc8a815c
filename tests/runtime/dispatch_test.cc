// Callbacks and dispatch: order, growth of the callback array, duplicates,
// the gate word, recursion, changes made from inside callbacks.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "hand_probes.h"

using hand::Object;

namespace {

Object one_probe() { return Object{{"disp", "ev", {{PROBEKIT_ARG_SIGNED, -4, "v", "int"}}}}; }

struct Log {
  std::vector<std::pair<int, long long>> calls;  // (callback id, argument)
};
struct Slot {
  Log *log;
  int id;
};
void log_cb(const probekit_event *e, void *data) {
  auto *s = static_cast<Slot *>(data);
  s->log->calls.push_back({s->id, probekit_arg_i64(e, 0)});
}

}  // namespace

TEST_CASE("several callbacks are called in registration order", "[dispatch]") {
  Object o = one_probe();
  o.load();
  Log log;
  Slot a{&log, 1}, b{&log, 2}, c{&log, 3};
  REQUIRE(probekit_callback_register(o[0], log_cb, &a, 0) == PROBEKIT_OK);
  REQUIRE(probekit_callback_register(o[0], log_cb, &b, 0) == PROBEKIT_OK);
  REQUIRE(probekit_callback_register(o[0], log_cb, &c, 0) == PROBEKIT_OK);
  CHECK(hand::fire(o[0], -5));
  CHECK(log.calls == std::vector<std::pair<int, long long>>{{1, -5}, {2, -5}, {3, -5}});
  // Removing the middle one keeps the others, in order.
  REQUIRE(probekit_callback_unregister(o[0], log_cb, &b, 0) == PROBEKIT_OK);
  log.calls.clear();
  hand::fire(o[0], 9);
  CHECK(log.calls == std::vector<std::pair<int, long long>>{{1, 9}, {3, 9}});
  // Re-registered, it comes last.
  REQUIRE(probekit_callback_register(o[0], log_cb, &b, 0) == PROBEKIT_OK);
  log.calls.clear();
  hand::fire(o[0], 1);
  CHECK(log.calls == std::vector<std::pair<int, long long>>{{1, 1}, {3, 1}, {2, 1}});
  o.unload();
}

// libside's side.c grows the callback array with a copy whose length is an
// element count used as a byte count, so the second and later registrations
// read back garbage. Register 1..N callbacks and check each one after each
// growth.
TEST_CASE("growing the callback array keeps every earlier registration intact", "[dispatch]") {
  Object o = one_probe();
  o.load();
  constexpr int N = 40;
  Log log;
  std::vector<Slot> slots;
  slots.reserve(N);
  for (int i = 0; i < N; ++i) slots.push_back({&log, 100 + i});
  for (int n = 1; n <= N; ++n) {
    REQUIRE(probekit_callback_register(o[0], log_cb, &slots[static_cast<size_t>(n - 1)], 0) == PROBEKIT_OK);
    log.calls.clear();
    hand::fire(o[0], n);
    REQUIRE(log.calls.size() == static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      CHECK(log.calls[static_cast<size_t>(i)].first == 100 + i);
      CHECK(log.calls[static_cast<size_t>(i)].second == n);
    }
  }
  CHECK(o.gate(0) == 1u << 16);  // one in-process "listener" whatever the count
  for (int i = 0; i < N; ++i) {
    REQUIRE(probekit_callback_unregister(o[0], log_cb, &slots[static_cast<size_t>(i)], 0) == PROBEKIT_OK);
  }
  CHECK(o.gate(0) == 0);
  CHECK(o[0]->runtime == nullptr);
  o.unload();
}

TEST_CASE("duplicate registrations are refused; another key or data is not a duplicate", "[dispatch]") {
  Object o = one_probe();
  o.load();
  Log log;
  Slot a{&log, 1}, b{&log, 2};
  REQUIRE(probekit_callback_register(o[0], log_cb, &a, 5) == PROBEKIT_OK);
  CHECK(probekit_callback_register(o[0], log_cb, &a, 5) == PROBEKIT_E_EXISTS);
  CHECK(probekit_callback_register(o[0], log_cb, &a, 6) == PROBEKIT_OK);
  CHECK(probekit_callback_register(o[0], log_cb, &b, 5) == PROBEKIT_OK);
  CHECK(probekit_callback_register(o[0], log_cb, &b, 5) == PROBEKIT_E_EXISTS);
  hand::fire(o[0], 0);
  CHECK(log.calls.size() == 3);
  // Unregister by key: both key-5 callbacks go, the key-6 one stays.
  CHECK(probekit_callback_unregister_key(5) == 2);
  log.calls.clear();
  hand::fire(o[0], 0);
  CHECK(log.calls == std::vector<std::pair<int, long long>>{{1, 0}});
  CHECK(probekit_callback_unregister_key(6) == 1);
  CHECK(o.gate(0) == 0);
  o.unload();
}

TEST_CASE("the gate's high half goes 0 -> 1<<16 -> 0 and the low half is never touched", "[dispatch][gate]") {
  Object o = one_probe();
  o.load();
  unsigned *word = o.gate_word(0);
  auto *low = reinterpret_cast<std::uint16_t *>(word);  // x86-64: the low half comes first
  *low = 5;
  Log log;
  Slot a{&log, 1}, b{&log, 2};
  REQUIRE(probekit_callback_register(o[0], log_cb, &a, 0) == PROBEKIT_OK);
  CHECK(o.gate(0) == (1u << 16) + 5);
  REQUIRE(probekit_callback_register(o[0], log_cb, &b, 0) == PROBEKIT_OK);
  CHECK(o.gate(0) == (1u << 16) + 5);
  REQUIRE(probekit_callback_unregister(o[0], log_cb, &a, 0) == PROBEKIT_OK);
  CHECK(o.gate(0) == (1u << 16) + 5);
  REQUIRE(probekit_callback_unregister(o[0], log_cb, &b, 0) == PROBEKIT_OK);
  CHECK(o.gate(0) == 5);

  // The kernel increments and decrements the low half with 2-byte
  // read-modify-writes that are not atomic with respect to us. A thread does
  // the same while we open and close the gate; if we ever wrote the whole
  // word from a stale read, one of its updates would be lost.
  std::atomic<bool> stop{false};
  std::atomic<long> mismatches{0};
  std::uint16_t final_low = 0;
  std::thread kernel([&] {
    std::uint16_t mine = __atomic_load_n(low, __ATOMIC_RELAXED);
    for (unsigned i = 0; !stop.load(std::memory_order_relaxed); ++i) {
      std::uint16_t v = __atomic_load_n(low, __ATOMIC_RELAXED);
      if (v != mine) mismatches.fetch_add(1, std::memory_order_relaxed);
      mine = static_cast<std::uint16_t>(i % 3 == 2 ? v - 1 : v + 1);
      __atomic_store_n(low, mine, __ATOMIC_RELAXED);
    }
    final_low = mine;
  });
  for (int i = 0; i < 300; ++i) {
    REQUIRE(probekit_callback_register(o[0], log_cb, &a, 0) == PROBEKIT_OK);
    REQUIRE((o.gate(0) >> 16) == 1u);
    REQUIRE(probekit_callback_unregister(o[0], log_cb, &a, 0) == PROBEKIT_OK);
    REQUIRE((o.gate(0) >> 16) == 0u);
  }
  stop = true;
  kernel.join();
  CHECK(mismatches.load() == 0);
  CHECK(o.gate(0) == final_low);
  o.unload();
}

namespace {
struct Recurse {
  probekit_probe_v1 *self;
  int calls = 0;
  unsigned long long dropped_before = 0;
};
void recurse_cb(const probekit_event *, void *data) {
  auto *r = static_cast<Recurse *>(data);
  ++r->calls;
  hand::fire(r->self, r->calls);  // fires its own probe
}
}  // namespace

TEST_CASE("a callback that fires its own probe recurses a bounded number of times", "[dispatch]") {
  Object o = one_probe();
  o.load();
  Recurse r{o[0]};
  REQUIRE(probekit_callback_register(o[0], recurse_cb, &r, 0) == PROBEKIT_OK);
  unsigned long long dropped = probekit_thread_dropped();
  hand::fire(o[0], 0);
  CHECK(r.calls == PROBEKIT_MAX_DEPTH);
  CHECK(probekit_thread_dropped() == dropped + 1);
  // And the thread is back at depth 0: the next firing is dispatched.
  r.calls = 0;
  hand::fire(o[0], 0);
  CHECK(r.calls == PROBEKIT_MAX_DEPTH);
  REQUIRE(probekit_callback_unregister(o[0], recurse_cb, &r, 0) == PROBEKIT_OK);
  o.unload();
}

namespace {
struct SelfRemove {
  probekit_probe_v1 *desc;
  int calls = 0;
  int status = 1;
};
void one_shot(const probekit_event *, void *data) {
  auto *s = static_cast<SelfRemove *>(data);
  ++s->calls;
  s->status = probekit_callback_unregister(s->desc, one_shot, s, 0);
}
struct Adder {
  probekit_probe_v1 *desc;
  Log *log;
  Slot slot;
  int status = 1;
};
void adder(const probekit_event *, void *data) {
  auto *a = static_cast<Adder *>(data);
  if (a->status == 1) a->status = probekit_callback_register(a->desc, log_cb, &a->slot, 0);
}
}  // namespace

TEST_CASE("callbacks may unregister themselves and register others", "[dispatch]") {
  Object o = one_probe();
  o.load();
  SelfRemove s{o[0]};
  REQUIRE(probekit_callback_register(o[0], one_shot, &s, 0) == PROBEKIT_OK);
  CHECK(hand::fire(o[0], 0));
  CHECK(s.calls == 1);
  CHECK(s.status == PROBEKIT_OK);
  CHECK_FALSE(hand::fire(o[0], 0));  // gate closed
  CHECK(s.calls == 1);
  probekit_synchronize();  // frees what the callback retired

  Log log;
  Adder a{o[0], &log, {&log, 42}};
  REQUIRE(probekit_callback_register(o[0], adder, &a, 0) == PROBEKIT_OK);
  hand::fire(o[0], 1);  // the walk in progress keeps the array it started with
  CHECK(a.status == PROBEKIT_OK);
  CHECK(log.calls.empty());
  hand::fire(o[0], 2);
  CHECK(log.calls == std::vector<std::pair<int, long long>>{{42, 2}});
  CHECK(probekit_callback_unregister(o[0], adder, &a, 0) == PROBEKIT_OK);
  CHECK(probekit_callback_unregister(o[0], log_cb, &a.slot, 0) == PROBEKIT_OK);
  o.unload();
}

TEST_CASE("dispatch on a closed or never-used probe does nothing", "[dispatch]") {
  Object o = one_probe();
  o.load();
  const unsigned long long args[1] = {0};
  CHECK(o[0]->runtime == nullptr);
  probekit_dispatch_v1(o[0], args);  // the gate was read open by a racing site
  o.unload();
}
