// The registry: objects' descriptor ranges, probe descriptions, enumeration
// and insert/remove notifications.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <vector>

#include "hand_probes.h"

using hand::Object;

namespace {

Object make_app() {
  return Object{{"regtest", "req__start",
                 {{PROBEKIT_ARG_SIGNED, -4, "fd", "int"}, {PROBEKIT_ARG_STRING, 8, "path", "string"}},
                 "A request starts."},
                {"regtest", "req__done", {{PROBEKIT_ARG_UNSIGNED, 8, "", "uint64_t"}}},
                {"regtest", "tick", {}}};
}

struct Seen {
  std::vector<std::string> events;
};

void record(const probekit_probe *p, probekit_notification what, void *data) {
  auto *seen = static_cast<Seen *>(data);
  seen->events.push_back(std::string(what == PROBEKIT_PROBE_INSERTED ? "+" : "-") + p->provider + ":" + p->name);
}

int count_provider(const probekit_probe *p, void *data) {
  if (std::strcmp(p->provider, "regtest") == 0) ++*static_cast<int *>(data);
  return 0;
}

void noop(const probekit_event *, void *) {}

}  // namespace

TEST_CASE("registered probes are found with their typed description", "[registry]") {
  Object app{{"regtest", "req__start",
              {{PROBEKIT_ARG_SIGNED, -4, "fd", "int"}, {PROBEKIT_ARG_STRING, 8, "path", "string"}},
              "A request starts."},
             {"regtest", "req__done", {{PROBEKIT_ARG_UNSIGNED, 8, "", "uint64_t"}}}};
  CHECK(probekit_probe_find("regtest", "req__start") == nullptr);
  app.load();
  const probekit_probe *p = probekit_probe_find("regtest", "req__start");
  REQUIRE(p != nullptr);
  CHECK(p->desc == app[0]);
  CHECK(probekit_probe_lookup(app[0]) == p);
  CHECK(std::string(p->doc) == "A request starts.");
  REQUIRE(p->nargs == 2);
  CHECK(p->args[0].kind == PROBEKIT_ARG_SIGNED);
  CHECK(p->args[0].sdt_size == -4);
  CHECK(std::string(p->args[0].name) == "fd");
  CHECK(std::string(p->args[0].type) == "int");
  CHECK(p->args[1].kind == PROBEKIT_ARG_STRING);
  CHECK(std::string(p->args[1].name) == "path");
  const probekit_probe *d = probekit_probe_find("regtest", "req__done");
  REQUIRE(d != nullptr);
  CHECK(std::string(d->args[0].name).empty());
  CHECK(std::string(d->doc).empty());
  CHECK(probekit_probe_find("regtest", "nope") == nullptr);
  app.unload();
  CHECK(probekit_probe_find("regtest", "req__start") == nullptr);
  CHECK(probekit_probe_lookup(app[0]) == nullptr);
}

TEST_CASE("every translation unit registers the same range: counted", "[registry]") {
  Object app = make_app();
  app.load();
  app.load();
  app.load();
  int n = 0;
  probekit_probe_foreach(count_provider, &n);
  CHECK(n == 3);  // not 9
  app.unload();
  app.unload();
  CHECK(probekit_probe_find("regtest", "tick") != nullptr);
  app.unload();
  CHECK(probekit_probe_find("regtest", "tick") == nullptr);
  n = 0;
  probekit_probe_foreach(count_provider, &n);
  CHECK(n == 0);
}

TEST_CASE("descriptors with an unknown ABI are skipped", "[registry]") {
  Object app = make_app();
  app[1]->abi = 0;  // e.g. padding, or a future version
  app.load();
  CHECK(probekit_probe_find("regtest", "req__start") != nullptr);
  CHECK(probekit_probe_find("regtest", "req__done") == nullptr);
  CHECK(probekit_callback_register(app[1], noop, nullptr, 0) == PROBEKIT_E_NO_PROBE);
  app.unload();
}

TEST_CASE("a new subscriber gets the loaded probes, then inserts and removes", "[registry]") {
  Object a = make_app();
  Object b{{"regtest2", "other", {}}};
  a.load();
  Seen seen;
  REQUIRE(probekit_subscribe(record, &seen) == PROBEKIT_OK);
  CHECK(probekit_subscribe(record, &seen) == PROBEKIT_E_EXISTS);
  // Other tests' objects are unloaded by now: the runtime's own probes
  // (probes/probekit.d, registered when libprobekit loads) and ours.
  std::vector<std::string> want{"+probekit:callback__registered", "+probekit:callback__unregistered",
                                "+probekit:probe__insert",        "+probekit:probe__remove",
                                "+probekit:statedump__begin",     "+probekit:statedump__end",
                                "+probekit:thread_dump",          "+regtest:req__start",
                                "+regtest:req__done",             "+regtest:tick"};
  CHECK(seen.events == want);
  b.load();
  b.load();  // second translation unit: no new notification
  want.push_back("+regtest2:other");
  CHECK(seen.events == want);
  b.unload();
  CHECK(seen.events == want);
  b.unload();
  want.push_back("-regtest2:other");
  CHECK(seen.events == want);
  REQUIRE(probekit_unsubscribe(record, &seen) == PROBEKIT_OK);
  CHECK(probekit_unsubscribe(record, &seen) == PROBEKIT_E_NOT_FOUND);
  a.unload();
  CHECK(seen.events == want);
}

namespace {
struct AutoAttach {
  int calls = 0;
  int registered = 0;
};
void count_cb(const probekit_event *, void *data) { ++static_cast<AutoAttach *>(data)->calls; }
void attach_on_insert(const probekit_probe *p, probekit_notification what, void *data) {
  // A tracer attaching from its notification: re-enters the API under the
  // registry lock.
  if (what == PROBEKIT_PROBE_INSERTED && std::strcmp(p->provider, "regtest3") == 0) {
    if (probekit_callback_register(p->desc, count_cb, data, 7) == PROBEKIT_OK) {
      ++static_cast<AutoAttach *>(data)->registered;
    }
  }
}
}  // namespace

TEST_CASE("a subscriber may register callbacks from its notification", "[registry]") {
  AutoAttach st;
  REQUIRE(probekit_subscribe(attach_on_insert, &st) == PROBEKIT_OK);
  {
    Object c{{"regtest3", "x", {}}, {"regtest3", "y", {}}};
    c.load();
    CHECK(st.registered == 2);
    CHECK(c.gate(0) == 1u << 16);
    CHECK(hand::fire(c[0]));
    CHECK(hand::fire(c[1]));
    CHECK(st.calls == 2);
    c.unload();  // drops the callbacks and closes the gates
    CHECK(c.gate(0) == 0);
    CHECK(c.gate(1) == 0);
    CHECK(probekit_callback_unregister(c[0], count_cb, &st, 7) == PROBEKIT_E_NO_PROBE);
  }
  probekit_unsubscribe(attach_on_insert, &st);
}

TEST_CASE("unloading an object drops its callbacks and closes its gates", "[registry]") {
  Object app = make_app();
  app.load();
  int calls = 0;
  auto cb = [](const probekit_event *, void *d) { ++*static_cast<int *>(d); };
  REQUIRE(probekit_callback_register(app[2], cb, &calls, 1) == PROBEKIT_OK);
  *app.gate_word(2) += 3;  // an external tracer holds the semaphore
  CHECK(app.gate(2) == (1u << 16) + 3);
  app.unload();
  CHECK(app.gate(2) == 3);
  CHECK(app[2]->runtime == nullptr);
  // Loaded again (dlopen at the same address): a fresh start.
  app.load();
  CHECK(app.gate(2) == 3);
  CHECK_FALSE(hand::fire(app[2]));
  CHECK(calls == 0);
  app.unload();
}

TEST_CASE("callbacks on a probe that is not registered are refused", "[registry]") {
  Object app = make_app();
  int x = 0;
  CHECK(probekit_callback_register(app[0], noop, &x, 0) == PROBEKIT_E_NO_PROBE);
  CHECK(probekit_callback_register(nullptr, noop, &x, 0) == PROBEKIT_E_INVALID);
  CHECK(probekit_callback_register_name("regtest", "tick", noop, &x, 0) == PROBEKIT_E_NO_PROBE);
  app.load();
  CHECK(probekit_callback_register(app[0], nullptr, &x, 0) == PROBEKIT_E_INVALID);
  CHECK(probekit_callback_register_name("regtest", "tick", noop, &x, 0) == PROBEKIT_OK);
  CHECK(app.gate(2) == 1u << 16);
  CHECK(probekit_callback_unregister(app[2], noop, &x, 0) == PROBEKIT_OK);
  CHECK(probekit_callback_unregister(app[2], noop, &x, 0) == PROBEKIT_E_NOT_FOUND);
  CHECK(std::string(probekit_strerror(PROBEKIT_E_NO_PROBE)) == "no such probe");
  app.unload();
}
