// Probes fired from signal handlers and from forked children.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "hand_probes.h"

using hand::Object;

namespace {

Object sig_object() { return Object{{"sig", "in_handler", {{PROBEKIT_ARG_SIGNED, -4, "signo", "int"}}},
                                    {"sig", "outer", {}}}; }

probekit_probe_v1 *g_handler_probe;
volatile sig_atomic_t g_handler_fired;

void handler(int signo) {
  // What a probe site in a signal handler does.
  if (hand::fire(g_handler_probe, signo)) g_handler_fired = g_handler_fired + 1;
}

std::atomic<int> g_handler_calls;
std::atomic<int> g_last_signo;
void handler_cb(const probekit_event *e, void *) {
  g_last_signo = static_cast<int>(probekit_arg_i64(e, 0));
  ++g_handler_calls;
}

void raise_cb(const probekit_event *, void *) { raise(SIGUSR1); }

struct SigGuard {
  struct sigaction old {};
  SigGuard() {
    struct sigaction sa {};
    sa.sa_handler = handler;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, &old);
  }
  ~SigGuard() { sigaction(SIGUSR1, &old, nullptr); }
};

}  // namespace

TEST_CASE("probes fired from a signal handler dispatch", "[signal]") {
  Object o = sig_object();
  o.load();
  g_handler_probe = o[0];
  g_handler_calls = 0;
  SigGuard guard;
  REQUIRE(probekit_callback_register(o[0], handler_cb, nullptr, 0) == PROBEKIT_OK);

  SECTION("on the main thread") {
    raise(SIGUSR1);
    CHECK(g_handler_calls == 1);
    CHECK(g_last_signo == SIGUSR1);
  }
  SECTION("on a thread whose first probe is in the handler (liburcu-bp registers it there)") {
    std::atomic<bool> ready{false}, done{false};
    std::thread t([&] {
      ready = true;
      while (!done) std::this_thread::yield();
    });
    while (!ready) std::this_thread::yield();
    pthread_kill(t.native_handle(), SIGUSR1);
    for (int i = 0; i < 5000 && g_handler_calls == 0; ++i) usleep(1000);
    done = true;
    t.join();
    CHECK(g_handler_calls == 1);
  }
  SECTION("interrupting a callback of another probe") {
    REQUIRE(probekit_callback_register(o[1], raise_cb, nullptr, 0) == PROBEKIT_OK);
    hand::fire(o[1]);  // its callback raises SIGUSR1: nested dispatch at depth 1
    CHECK(g_handler_calls == 1);
    REQUIRE(probekit_callback_unregister(o[1], raise_cb, nullptr, 0) == PROBEKIT_OK);
  }
  REQUIRE(probekit_callback_unregister(o[0], handler_cb, nullptr, 0) == PROBEKIT_OK);
  o.unload();
}

namespace {
std::atomic<int> g_child_calls;
void child_cb(const probekit_event *, void *) { ++g_child_calls; }

// Runs body in a child process with a watchdog; returns its exit status
// (0 = success, 99 = deadlock).
template <class F>
int in_child(F body) {
  pid_t pid = fork();
  if (pid == 0) {
    alarm(20);  // a deadlock ends the child with SIGALRM
    _exit(body());
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFSIGNALED(status)) return 100 + WTERMSIG(status);
  return WEXITSTATUS(status);
}
}  // namespace

TEST_CASE("a forked child dispatches, and registers and unregisters", "[fork]") {
  Object o = sig_object();
  o.load();
  g_child_calls = 0;
  REQUIRE(probekit_callback_register(o[1], child_cb, nullptr, 0) == PROBEKIT_OK);
  int rc = in_child([&]() -> int {
    if (!hand::fire(o[1])) return 1;
    if (g_child_calls != 1) return 2;
    // The child's writers work (mutex and liburcu-bp state fixed up at fork).
    if (probekit_callback_register(o[0], child_cb, nullptr, 1) != PROBEKIT_OK) return 3;
    hand::fire(o[0], 0);
    if (g_child_calls != 2) return 4;
    if (probekit_callback_unregister(o[1], child_cb, nullptr, 0) != PROBEKIT_OK) return 5;
    if (probekit_callback_unregister(o[0], child_cb, nullptr, 1) != PROBEKIT_OK) return 6;
    if (hand::fire(o[1])) return 7;
    return 0;
  });
  CHECK(rc == 0);
  // The parent is unaffected.
  CHECK(g_child_calls == 0);
  CHECK(hand::fire(o[1]));
  CHECK(g_child_calls == 1);
  REQUIRE(probekit_callback_unregister(o[1], child_cb, nullptr, 0) == PROBEKIT_OK);
  o.unload();
}

TEST_CASE("fork while another thread holds the writer lock does not deadlock the child", "[fork]") {
  Object o = sig_object();
  o.load();
  std::atomic<bool> stop{false};
  std::atomic<long> churn{0};
  int dummy = 0;
  std::thread writer([&] {
    while (!stop) {
      probekit_callback_register(o[0], child_cb, &dummy, 9);
      probekit_callback_unregister(o[0], child_cb, &dummy, 9);
      ++churn;
    }
  });
  while (churn < 10) std::this_thread::yield();
  for (int i = 0; i < 20; ++i) {
    int rc = in_child([&]() -> int {
      int mine = 0;
      if (probekit_callback_register(o[1], child_cb, &mine, 3) != PROBEKIT_OK) return 1;
      if (probekit_callback_unregister(o[1], child_cb, &mine, 3) != PROBEKIT_OK) return 2;
      hand::fire(o[0], 0);
      return 0;
    });
    REQUIRE(rc == 0);
  }
  stop = true;
  writer.join();
  o.unload();
}
