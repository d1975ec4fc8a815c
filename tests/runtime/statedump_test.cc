// Statedumps: providers run for a tracer's key, by polling or by the agent
// thread; their probes reach only that key's callbacks; requests, cancels
// and unregistration from any thread; fork.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <probekit/runtime.hpp>
#include <string>
#include <thread>
#include <vector>

#include "hand_probes.h"

using hand::Object;

namespace {

Object state_object() {
  return Object{{"app", "conn", {{PROBEKIT_ARG_SIGNED, -4, "fd", "int"}}}, {"app", "other", {}}};
}

// A tracer: counts the events its callback receives.
struct Tracer {
  std::atomic<int> events{0};
  std::atomic<long long> fd_sum{0};
  static void cb(const probekit_event *e, void *data) {
    auto *t = static_cast<Tracer *>(data);
    t->fd_sum += probekit_arg_i64(e, 0);
    ++t->events;
  }
};

// The application's state: three open connections, dumped through app:conn.
struct App {
  probekit_probe_v1 *conn;
  std::atomic<int> dumps{0};
  std::atomic<uint64_t> last_key{0};
  std::atomic<bool> on_main{false};
  std::thread::id main_id = std::this_thread::get_id();
  static void dump(uint64_t key, void *data) {
    auto *a = static_cast<App *>(data);
    for (int fd : {3, 4, 5}) hand::fire(a->conn, fd);
    a->last_key = key;
    a->on_main = std::this_thread::get_id() == a->main_id;
    ++a->dumps;
  }
};

// Waits (up to 10 s) until cond holds.
template <class F>
bool eventually(F cond) {
  for (int i = 0; i < 10000; ++i) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return cond();
}

}  // namespace

TEST_CASE("a polled statedump reaches only the requesting key's callbacks", "[statedump]") {
  Object o = state_object();
  o.load();
  App app{o[0]};
  Tracer a, b;
  REQUIRE(probekit_callback_register(o[0], Tracer::cb, &a, 1) == PROBEKIT_OK);
  REQUIRE(probekit_callback_register(o[0], Tracer::cb, &b, 2) == PROBEKIT_OK);
  probekit_statedump *sd = nullptr;
  REQUIRE(probekit_statedump_register("conns", App::dump, &app, PROBEKIT_STATEDUMP_POLLING, &sd) == PROBEKIT_OK);

  CHECK(probekit_statedump_poll(sd) == 0);  // nothing requested
  REQUIRE(probekit_statedump_request(1) == PROBEKIT_OK);
  CHECK(probekit_statedump_request(1) == PROBEKIT_E_EXISTS);
  CHECK(probekit_statedump_pending(1) == 1);
  CHECK(app.dumps == 0);  // polling: nothing runs until the application polls
  CHECK(probekit_statedump_poll(sd) == 1);
  CHECK(app.dumps == 1);
  CHECK(app.last_key == 1);
  CHECK(app.on_main);
  CHECK(a.events == 3);
  CHECK(a.fd_sum == 12);
  CHECK(b.events == 0);
  CHECK(probekit_statedump_pending(1) == 0);
  CHECK(probekit_statedump_poll(sd) == 0);  // once per request

  // Outside a dump, firings reach every callback again.
  hand::fire(o[0], 7);
  CHECK(a.events == 4);
  CHECK(b.events == 1);

  // A second tracer's request dumps again, for it alone.
  REQUIRE(probekit_statedump_request(2) == PROBEKIT_OK);
  CHECK(probekit_statedump_poll(sd) == 1);
  CHECK(a.events == 4);
  CHECK(b.events == 4);
  CHECK(app.last_key == 2);

  CHECK(probekit_statedump_cancel(1) == PROBEKIT_OK);
  CHECK(probekit_statedump_cancel(1) == PROBEKIT_E_NOT_FOUND);
  CHECK(probekit_statedump_cancel(2) == PROBEKIT_OK);
  CHECK(probekit_statedump_unregister(sd) == PROBEKIT_OK);
  CHECK(probekit_statedump_unregister(sd) == PROBEKIT_E_NOT_FOUND);
  CHECK(probekit_statedump_poll(sd) == PROBEKIT_E_NOT_FOUND);
  probekit_callback_unregister_key(1);
  probekit_callback_unregister_key(2);
}

TEST_CASE("statedump requests: standing, cancelled, bad arguments", "[statedump]") {
  Object o = state_object();
  o.load();
  App app{o[0]};
  probekit_statedump *sd = nullptr;
  CHECK(probekit_statedump_register(nullptr, App::dump, &app, PROBEKIT_STATEDUMP_POLLING, &sd) == PROBEKIT_E_INVALID);
  CHECK(probekit_statedump_register("x", nullptr, &app, PROBEKIT_STATEDUMP_POLLING, &sd) == PROBEKIT_E_INVALID);
  CHECK(probekit_statedump_register("x", App::dump, &app, static_cast<probekit_statedump_mode>(9), &sd) ==
        PROBEKIT_E_INVALID);

  // A request made before the provider exists (a library loaded later) is
  // served when it registers.
  REQUIRE(probekit_statedump_request(11) == PROBEKIT_OK);
  REQUIRE(probekit_statedump_request(12) == PROBEKIT_OK);
  REQUIRE(probekit_statedump_register("late", App::dump, &app, PROBEKIT_STATEDUMP_POLLING, &sd) == PROBEKIT_OK);
  CHECK(probekit_statedump_pending(11) == 1);
  CHECK(probekit_statedump_pending(12) == 1);
  // Cancelling drops what has not started.
  CHECK(probekit_statedump_cancel(11) == PROBEKIT_OK);
  CHECK(probekit_statedump_pending(11) == 0);
  CHECK(probekit_statedump_poll(sd) == 1);
  CHECK(app.last_key == 12);
  CHECK(probekit_statedump_cancel(12) == PROBEKIT_OK);

  // Unregistering drops pending dumps.
  REQUIRE(probekit_statedump_request(13) == PROBEKIT_OK);
  CHECK(probekit_statedump_pending(13) == 1);
  CHECK(probekit_statedump_unregister(sd) == PROBEKIT_OK);
  CHECK(probekit_statedump_pending(13) == 0);
  CHECK(probekit_statedump_cancel(13) == PROBEKIT_OK);
  CHECK(app.dumps == 1);
}

TEST_CASE("the agent thread runs statedumps; unregister waits for a running one", "[statedump]") {
  Object o = state_object();
  o.load();
  App app{o[0]};
  Tracer t;
  REQUIRE(probekit_callback_register(o[0], Tracer::cb, &t, 21) == PROBEKIT_OK);
  probekit_statedump *sd = nullptr;
  REQUIRE(probekit_statedump_register("agent", App::dump, &app, PROBEKIT_STATEDUMP_AGENT, &sd) == PROBEKIT_OK);
  CHECK(probekit_statedump_poll(sd) == PROBEKIT_E_INVALID);
  REQUIRE(probekit_statedump_request(21) == PROBEKIT_OK);
  REQUIRE(eventually([] { return probekit_statedump_pending(21) == 0; }));
  CHECK(app.dumps == 1);
  CHECK_FALSE(app.on_main);
  CHECK(t.events == 3);
  CHECK(probekit_statedump_cancel(21) == PROBEKIT_OK);
  CHECK(probekit_statedump_unregister(sd) == PROBEKIT_OK);

  // A slow provider: unregister (and cancel) return only once it finished.
  struct Slow {
    std::atomic<bool> started{false}, finished{false};
    static void dump(uint64_t, void *data) {
      auto *s = static_cast<Slow *>(data);
      s->started = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      s->finished = true;
    }
  } slow;
  REQUIRE(probekit_statedump_register("slow", Slow::dump, &slow, PROBEKIT_STATEDUMP_AGENT, &sd) == PROBEKIT_OK);
  REQUIRE(probekit_statedump_request(22) == PROBEKIT_OK);
  REQUIRE(eventually([&] { return slow.started.load(); }));
  CHECK(probekit_statedump_unregister(sd) == PROBEKIT_OK);
  CHECK(slow.finished);

  slow.started = slow.finished = false;
  REQUIRE(probekit_statedump_register("slow", Slow::dump, &slow, PROBEKIT_STATEDUMP_AGENT, &sd) == PROBEKIT_OK);
  REQUIRE(eventually([&] { return slow.started.load(); }));  // 22 is still requested
  CHECK(probekit_statedump_cancel(22) == PROBEKIT_OK);
  CHECK(slow.finished);
  CHECK(probekit_statedump_unregister(sd) == PROBEKIT_OK);
  probekit_callback_unregister_key(21);
}

TEST_CASE("a provider may unregister itself and request from inside its dump", "[statedump]") {
  struct Self {
    probekit_statedump *sd = nullptr;
    int unregister_rc = 1, request_rc = 1;
    static void dump(uint64_t, void *data) {
      auto *s = static_cast<Self *>(data);
      s->request_rc = probekit_statedump_request(32);
      s->unregister_rc = probekit_statedump_unregister(s->sd);
    }
  } self;
  REQUIRE(probekit_statedump_register("self", Self::dump, &self, PROBEKIT_STATEDUMP_POLLING, &self.sd) ==
          PROBEKIT_OK);
  REQUIRE(probekit_statedump_request(31) == PROBEKIT_OK);
  CHECK(probekit_statedump_poll(self.sd) == 1);
  CHECK(self.request_rc == PROBEKIT_OK);
  CHECK(self.unregister_rc == PROBEKIT_OK);
  CHECK(probekit_statedump_pending(32) == 0);  // the provider left: nothing pending for it
  CHECK(probekit_statedump_cancel(31) == PROBEKIT_OK);
  CHECK(probekit_statedump_cancel(32) == PROBEKIT_OK);
}

TEST_CASE("statedump requests and cancels from several threads while providers run", "[statedump][threads]") {
  Object o = state_object();
  o.load();
  App agent_app{o[0]}, poll_app{o[0]};
  probekit_statedump *agent = nullptr, *polled = nullptr;
  REQUIRE(probekit_statedump_register("a", App::dump, &agent_app, PROBEKIT_STATEDUMP_AGENT, &agent) == PROBEKIT_OK);
  REQUIRE(probekit_statedump_register("p", App::dump, &poll_app, PROBEKIT_STATEDUMP_POLLING, &polled) == PROBEKIT_OK);
  Tracer tracers[4];
  for (uint64_t k = 0; k < 4; ++k) {
    REQUIRE(probekit_callback_register(o[0], Tracer::cb, &tracers[k], 40 + k) == PROBEKIT_OK);
  }
  std::atomic<bool> stop{false};
  std::atomic<int> refused{0};  // Catch2's CHECK is not thread-safe: count, check after join
  std::vector<std::thread> threads;
  for (uint64_t k = 0; k < 4; ++k) {
    threads.emplace_back([&, k] {
      for (int i = 0; i < 200; ++i) {
        refused += probekit_statedump_request(40 + k) != PROBEKIT_OK;
        if (i % 3 == 0) std::this_thread::yield();
        refused += probekit_statedump_cancel(40 + k) != PROBEKIT_OK;
      }
    });
  }
  std::thread poller([&] {
    while (!stop) probekit_statedump_poll(polled);
  });
  for (auto &t : threads) t.join();
  stop = true;
  poller.join();
  CHECK(refused == 0);
  // Every dump delivered whole events to exactly its key: sums are
  // multiples of 12 (3 + 4 + 5) per dump.
  for (auto &t : tracers) CHECK(t.fd_sum % 12 == 0);
  CHECK(probekit_statedump_unregister(agent) == PROBEKIT_OK);
  CHECK(probekit_statedump_unregister(polled) == PROBEKIT_OK);
  for (uint64_t k = 0; k < 4; ++k) probekit_callback_unregister_key(40 + k);
}

TEST_CASE("the agent thread is recreated in a forked child, with a dump cut by the fork", "[statedump][fork]") {
  Object o = state_object();
  o.load();
  struct Gated {
    probekit_probe_v1 *conn;
    std::atomic<bool> started{false}, release{false};
    std::atomic<int> dumps{0};
    static void dump(uint64_t, void *data) {
      auto *g = static_cast<Gated *>(data);
      g->started = true;
      while (!g->release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      hand::fire(g->conn, 9);
      ++g->dumps;
    }
  } gated{o[0]};
  Tracer t;
  REQUIRE(probekit_callback_register(o[0], Tracer::cb, &t, 51) == PROBEKIT_OK);
  probekit_statedump *sd = nullptr;
  REQUIRE(probekit_statedump_register("forked", Gated::dump, &gated, PROBEKIT_STATEDUMP_AGENT, &sd) == PROBEKIT_OK);
  REQUIRE(probekit_statedump_request(51) == PROBEKIT_OK);
  REQUIRE(eventually([&] { return gated.started.load(); }));
  // The parent's agent is inside the dump (not holding any lock of ours)
  // until release is set, after the fork.
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  gated.release = true;
  if (pid == 0) {
    // The dump that ran on the parent's agent is pending again here, and a
    // new agent runs it; the child can also request new dumps.
    bool ok = eventually([] { return probekit_statedump_pending(51) == 0; }) && t.events == 1 && t.fd_sum == 9;
    ok = ok && probekit_statedump_request(52) == PROBEKIT_OK;
    ok = ok && eventually([] { return probekit_statedump_pending(52) == 0; });
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  REQUIRE(eventually([] { return probekit_statedump_pending(51) == 0; }));
  CHECK(gated.dumps == 1);
  CHECK(probekit_statedump_cancel(51) == PROBEKIT_OK);
  CHECK(probekit_statedump_unregister(sd) == PROBEKIT_OK);
  probekit_callback_unregister_key(51);
}

TEST_CASE("C++: provide_statedump and statedump_request", "[statedump][cxx]") {
  Object o = state_object();
  o.load();
  std::vector<int> seen;
  auto l = probekit::listen<int>(o[0], [&](int fd) { seen.push_back(fd); }, 61);
  REQUIRE(l);
  std::vector<std::string> marks;
  auto begin = probekit::listen<const char *, std::uint64_t>(
      "probekit", "statedump__begin", [&](const char *name, std::uint64_t key) {
        marks.push_back(std::string("begin ") + name + " " + std::to_string(key));
      }, 61);
  auto end = probekit::listen<const char *, std::uint64_t>(
      "probekit", "statedump__end", [&](const char *name, std::uint64_t key) {
        marks.push_back(std::string("end ") + name + " " + std::to_string(key));
      }, 61);
  REQUIRE(begin);
  REQUIRE(end);
  {
    auto sd = probekit::provide_statedump("cxx", [&](std::uint64_t) { hand::fire(o[0], 8); },
                                          PROBEKIT_STATEDUMP_POLLING);
    REQUIRE(sd);
    probekit::statedump_request req(61);
    REQUIRE(req);
    CHECK(req.pending() == 1);
    CHECK(sd.poll() == 1);
    CHECK(req.pending() == 0);
    probekit::statedump_request again(61);
    CHECK(again.status() == PROBEKIT_E_EXISTS);
  }
  CHECK(seen == std::vector<int>{8});
  CHECK(marks == std::vector<std::string>{"begin cxx 61", "end cxx 61"});
  CHECK(probekit_statedump_cancel(61) == PROBEKIT_E_NOT_FOUND);  // the request's destructor cancelled it
}
