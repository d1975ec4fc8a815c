// Statedumps (libside's model, docs/runtime.md): providers registered by the
// application, requests per tracer key, run by the agent thread or when the
// application polls.
//
// One mutex guards the providers and the requested keys; a provider runs
// without it (it fires probes, and may call any runtime function, including
// these). A dump in progress is marked on its provider, so unregister and
// cancel can wait for it on g_done.
#include "runtime/internal.h"
#include "runtime/own_probes.h"

#include <signal.h>
#include <string.h>

#include <algorithm>
#include <new>

struct probekit_statedump {
  char *name;
  probekit_statedump_fn fn;
  void *data;
  probekit_statedump_mode mode;
  std::vector<uint64_t> pending;  // keys to dump for, oldest first
  bool running = false;           // a dump is in progress, on thread runner
  bool unregistered = false;      // from inside its own dump: freed when that dump returns
  uint64_t running_key = 0;
  pthread_t runner{};
};

namespace probekit::rt {

namespace {

pthread_mutex_t g_sd_mutex = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t g_wake = PTHREAD_COND_INITIALIZER;  // the agent: work, or stop
pthread_cond_t g_done = PTHREAD_COND_INITIALIZER;  // a dump finished
std::vector<probekit_statedump *> *g_providers;    // created on first use, never destroyed
std::vector<uint64_t> *g_keys;                     // requested keys
bool g_agent_running;
bool g_agent_stop;
pthread_t g_agent;
__thread bool t_is_agent __attribute__((tls_model("initial-exec")));

class SdLock {
public:
  SdLock() {
    install_atfork_once();
    pthread_mutex_lock(&g_sd_mutex);
  }
  ~SdLock() { pthread_mutex_unlock(&g_sd_mutex); }
  SdLock(const SdLock &) = delete;
  SdLock &operator=(const SdLock &) = delete;
};

void destroy(probekit_statedump *p) {
  free(p->name);
  delete p;
}

bool ensure_lists() {  // under g_sd_mutex
  if (!g_providers) g_providers = new (std::nothrow) std::vector<probekit_statedump *>;
  if (!g_keys) g_keys = new (std::nothrow) std::vector<uint64_t>;
  return g_providers && g_keys;
}

bool registered(const probekit_statedump *p) {  // under g_sd_mutex; p is not dereferenced
  return g_providers && std::find(g_providers->begin(), g_providers->end(), p) != g_providers->end();
}

bool running_elsewhere(const probekit_statedump *p) {
  return p->running && !pthread_equal(p->runner, pthread_self());
}

// Runs the provider for key on this thread, outside the mutex. Probes it
// fires reach only key's callbacks; nested dumps (a provider that polls
// another) restore the outer key.
void run_dump(probekit_statedump *p, uint64_t key) {
  const bool was_dumping = t_dumping;
  const uint64_t was_key = t_dump_key;
  t_dump_key = key;
  t_dumping = true;
  own_probe_statedump_begin(p->name, key);
  p->fn(key, p->data);
  own_probe_statedump_end(p->name, key);
  t_dumping = was_dumping;
  t_dump_key = was_key;
}

// Under g_sd_mutex (lock held by the caller, released while the provider
// runs): runs p's pending dumps one at a time; returns how many ran.
int run_pending(probekit_statedump *p, pthread_mutex_t *m) {
  int ran = 0;
  while (!p->pending.empty() && !p->running && !finalized()) {
    uint64_t key = p->pending.front();
    p->pending.erase(p->pending.begin());
    p->running = true;
    p->running_key = key;
    p->runner = pthread_self();
    pthread_mutex_unlock(m);
    run_dump(p, key);
    pthread_mutex_lock(m);
    p->running = false;
    pthread_cond_broadcast(&g_done);
    ++ran;
    if (p->unregistered) {
      destroy(p);
      break;
    }
  }
  return ran;
}

probekit_statedump *next_agent_work() {  // under g_sd_mutex
  if (!g_providers) return nullptr;
  for (probekit_statedump *p : *g_providers) {
    if (p->mode == PROBEKIT_STATEDUMP_AGENT && !p->pending.empty() && !p->running) return p;
  }
  return nullptr;
}

void *agent_main(void *) {
  t_is_agent = true;
  pthread_mutex_lock(&g_sd_mutex);
  while (!g_agent_stop) {
    if (probekit_statedump *p = next_agent_work()) {
      run_pending(p, &g_sd_mutex);
    } else {
      pthread_cond_wait(&g_wake, &g_sd_mutex);
    }
  }
  pthread_mutex_unlock(&g_sd_mutex);
  return nullptr;
}

// Under g_sd_mutex. The agent blocks every signal: signals meant for the
// application's threads are not delivered to it.
void start_agent() {
  if (g_agent_running || finalized()) return;
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  g_agent_stop = false;
  g_agent_running = pthread_create(&g_agent, nullptr, agent_main, nullptr) == 0;
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

}  // namespace

void statedump_before_fork() { pthread_mutex_lock(&g_sd_mutex); }

void statedump_after_fork_parent() { pthread_mutex_unlock(&g_sd_mutex); }

void statedump_after_fork_child() {
  // Only the forking thread exists in the child: new mutex and condition
  // variables (other threads may have been waiting on them), dumps that ran
  // on other threads are pending again (the child's state is dumped whole),
  // and a new agent thread when the parent had one.
  pthread_mutex_init(&g_sd_mutex, nullptr);
  pthread_cond_init(&g_wake, nullptr);
  pthread_cond_init(&g_done, nullptr);
  if (g_providers) {
    for (probekit_statedump *p : *g_providers) {
      if (running_elsewhere(p)) {
        p->running = false;
        try {
          p->pending.insert(p->pending.begin(), p->running_key);
        } catch (...) {
          // Out of memory: the child misses this dump.
        }
      }
    }
  }
  if (g_agent_running && !t_is_agent) {
    g_agent_running = false;
    start_agent();
  }
}

void statedump_finalize() {
  // Stop the agent so that it does not run providers (or this library's
  // code, if it is being unloaded) any more. It is joined when it is idle;
  // one running a provider (or this very thread, exiting from a provider)
  // finishes that dump and then stops, with the process.
  pthread_mutex_lock(&g_sd_mutex);
  bool join = false;
  if (g_agent_running) {
    g_agent_stop = true;
    pthread_cond_broadcast(&g_wake);
    join = !t_is_agent;
    if (g_providers) {
      for (probekit_statedump *p : *g_providers) {
        if (p->running && p->mode == PROBEKIT_STATEDUMP_AGENT) join = false;
      }
    }
    g_agent_running = false;
  }
  pthread_mutex_unlock(&g_sd_mutex);
  if (join) pthread_join(g_agent, nullptr);
}

}  // namespace probekit::rt

using namespace probekit::rt;

extern "C" {

int probekit_statedump_register(const char *name, probekit_statedump_fn fn, void *data,
                                probekit_statedump_mode mode, probekit_statedump **out) {
  if (!name || !fn || !out || (mode != PROBEKIT_STATEDUMP_AGENT && mode != PROBEKIT_STATEDUMP_POLLING)) {
    return PROBEKIT_E_INVALID;
  }
  auto *p = new (std::nothrow) probekit_statedump;
  if (!p) return PROBEKIT_E_NO_MEMORY;
  p->name = strdup(name);
  p->fn = fn;
  p->data = data;
  p->mode = mode;
  SdLock lock;
  if (!p->name || !ensure_lists()) {
    destroy(p);
    return PROBEKIT_E_NO_MEMORY;
  }
  try {
    p->pending = *g_keys;
    g_providers->push_back(p);
  } catch (...) {
    destroy(p);
    return PROBEKIT_E_NO_MEMORY;
  }
  if (mode == PROBEKIT_STATEDUMP_AGENT) {
    start_agent();
    pthread_cond_broadcast(&g_wake);
  }
  *out = p;
  return PROBEKIT_OK;
}

int probekit_statedump_unregister(probekit_statedump *p) {
  {
    SdLock lock;
    if (!registered(p)) return PROBEKIT_E_NOT_FOUND;
    g_providers->erase(std::find(g_providers->begin(), g_providers->end(), p));
    p->pending.clear();
    while (running_elsewhere(p)) pthread_cond_wait(&g_done, &g_sd_mutex);
    // From inside its own dump: the dump's caller (run_pending) still uses
    // p and frees it when the dump returns.
    if (p->running) {
      p->unregistered = true;
      return PROBEKIT_OK;
    }
  }
  destroy(p);
  return PROBEKIT_OK;
}

int probekit_statedump_poll(probekit_statedump *p) {
  SdLock lock;
  if (!registered(p)) return PROBEKIT_E_NOT_FOUND;
  if (p->mode != PROBEKIT_STATEDUMP_POLLING) return PROBEKIT_E_INVALID;
  return run_pending(p, &g_sd_mutex);
}

int probekit_statedump_request(uint64_t key) {
  SdLock lock;
  if (!ensure_lists()) return PROBEKIT_E_NO_MEMORY;
  if (std::find(g_keys->begin(), g_keys->end(), key) != g_keys->end()) return PROBEKIT_E_EXISTS;
  try {
    g_keys->reserve(g_keys->size() + 1);
    for (probekit_statedump *p : *g_providers) p->pending.reserve(p->pending.size() + 1);
  } catch (...) {
    return PROBEKIT_E_NO_MEMORY;
  }
  // Reserved above: nothing below throws, so the request is all or nothing.
  g_keys->push_back(key);
  for (probekit_statedump *p : *g_providers) p->pending.push_back(key);
  pthread_cond_broadcast(&g_wake);
  return PROBEKIT_OK;
}

int probekit_statedump_cancel(uint64_t key) {
  SdLock lock;
  if (!g_keys) return PROBEKIT_E_NOT_FOUND;
  auto it = std::find(g_keys->begin(), g_keys->end(), key);
  if (it == g_keys->end()) return PROBEKIT_E_NOT_FOUND;
  g_keys->erase(it);
  for (probekit_statedump *p : *g_providers) {
    p->pending.erase(std::remove(p->pending.begin(), p->pending.end(), key), p->pending.end());
  }
  for (;;) {
    bool busy = false;
    for (probekit_statedump *p : *g_providers) busy |= running_elsewhere(p) && p->running_key == key;
    if (!busy) break;
    pthread_cond_wait(&g_done, &g_sd_mutex);
  }
  return PROBEKIT_OK;
}

int probekit_statedump_pending(uint64_t key) {
  SdLock lock;
  int n = 0;
  for (size_t i = 0; g_providers && i < g_providers->size(); ++i) {
    const probekit_statedump *p = (*g_providers)[i];
    n += static_cast<int>(std::count(p->pending.begin(), p->pending.end(), key));
    n += p->running && p->running_key == key;
  }
  return n;
}

}  // extern "C"
