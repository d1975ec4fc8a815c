// Probes fired after the runtime's finalisation are ignored, never a crash:
// while a process exits, from other threads firing in tight loops, from the
// destructor of a library finalised after libprobekit (exit_late.cc), from
// an atexit handler registered there (it runs after every library's
// destructors: libprobekit's, liburcu-bp's, libstdc++'s), and from a static
// destructor that runs later still. The scenario runs in a child process;
// the parent checks its exit status and what the late code reported.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>

#include "hand_probes.h"

extern "C" void exit_late_set_hook(void (*hook)());

namespace {

hand::Object *g_object;  // registered and never unregistered: its gate stays open
std::atomic<long> g_calls;
int g_report = -1;       // the pipe to the parent

void count_cb(const probekit_event *, void *) { g_calls.fetch_add(1, std::memory_order_relaxed); }

void report(const char *line) {
  if (write(g_report, line, strlen(line)) < 0) _exit(4);
}

// Fires from this thread and lets the others fire for a while; no callback
// may run in the meantime. Dispatches that passed the finalisation check
// just before it may still be finishing their callback (under TSan that
// takes a while): wait until the count has settled first.
void expect_ignored(const char *who) {
  long before = g_calls.load();
  for (int i = 0; i < 40; ++i) {
    usleep(50 * 1000);
    long now = g_calls.load();
    if (now == before) break;
    before = now;
  }
  for (int i = 0; i < 10000; ++i) hand::fire((*g_object)[0], i);
  usleep(20 * 1000);
  if (g_calls.load() != before) {
    report(who);
    report(": dispatched after finalisation\n");
    _exit(1);
  }
  report(who);
  report(": ignored\n");
}

struct LateStatic {
  ~LateStatic() { expect_ignored("static destructor"); }
};

void late_atexit() {
  expect_ignored("atexit handler");
  // Constructed now, so destroyed after this handler: later still.
  static LateStatic late;
}

// The executable is finalised before the libraries it needs: the runtime
// still dispatches here.
__attribute__((destructor)) void executable_fini() {
  if (g_report < 0) return;  // the parent
  long before = g_calls.load();
  hand::fire((*g_object)[0], 1);
  report(g_calls.load() > before ? "executable destructor: dispatched\n" : "executable destructor: not dispatched\n");
}

// Called by exit_late's destructor, inside _dl_fini after libprobekit's
// destructor; an atexit handler registered here runs after _dl_fini.
void late_library_fini() {
  expect_ignored("library destructor");
  atexit(late_atexit);
}

[[noreturn]] void child() {
  g_object = new hand::Object{{"exit", "fired", {{PROBEKIT_ARG_SIGNED, -4, "i", "int"}}}};
  g_object->load();
  exit_late_set_hook(late_library_fini);
  if (probekit_callback_register((*g_object)[0], count_cb, nullptr, 1) != PROBEKIT_OK) _exit(2);
  for (int t = 0; t < 2; ++t) {
    std::thread([] {
      for (int i = 0;; ++i) hand::fire((*g_object)[0], i);
    }).detach();
  }
  while (g_calls.load() < 1000) usleep(1000);
  exit(0);
}

}  // namespace

int main() {
  int fds[2];
  if (pipe(fds) != 0) return 99;
  pid_t pid = fork();
  if (pid < 0) return 99;
  if (pid == 0) {
    close(fds[0]);
    g_report = fds[1];
    child();
  }
  close(fds[1]);
  std::string out;
  char buf[256];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
  int status = 0;
  waitpid(pid, &status, 0);
  printf("%s", out.c_str());
  const std::string want =
      "executable destructor: dispatched\n"
      "library destructor: ignored\n"
      "atexit handler: ignored\n"
      "static destructor: ignored\n";
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    printf("FAIL: the exiting child %s %d\n", WIFSIGNALED(status) ? "died of signal" : "exited with",
           WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    return 1;
  }
  if (out != want) {
    printf("FAIL: expected\n%s", want.c_str());
    return 1;
  }
  printf("ok\n");
  return 0;
}
