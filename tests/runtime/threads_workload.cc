#include "threads_workload.h"

#include <cerrno>
#include <condition_variable>
#include <csignal>
#include <ctime>
#include <mutex>
#include <probekit/threads.h>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

std::atomic<bool> g_stop{false};
std::atomic<int> g_ready{0};
std::atomic<uint64_t> g_eintr{0};
std::mutex g_cv_mutex;
std::condition_variable g_cv;
int g_pipe[2] = {-1, -1};
std::vector<std::thread> g_threads;
std::vector<pthread_t> g_sleepers;
std::mutex g_sleepers_mutex;

std::atomic<int> g_sleepers_left{0};

void on_wake(int) {}

// Keeps each call a real call with its own frame: no inlining, no tail call.
#define KEEP_FRAME() asm volatile("" ::: "memory")

}  // namespace

extern "C" {

__attribute__((noinline)) void pk_run_5() {
    g_ready.fetch_add(1);
    std::mutex own;  // intercepted by TSan: lets it deliver deferred signals
    volatile uint64_t x = 0;
    while (!g_stop.load(std::memory_order_relaxed)) {
        for (int i = 0; i < 1000; ++i) x = x + 1;
        own.lock();
        own.unlock();
        probekit_thread_progress();
    }
    KEEP_FRAME();
}
__attribute__((noinline)) void pk_run_4() { pk_run_5(); KEEP_FRAME(); }
__attribute__((noinline)) void pk_run_3() { pk_run_4(); KEEP_FRAME(); }
__attribute__((noinline)) void pk_run_2() { pk_run_3(); KEEP_FRAME(); }
__attribute__((noinline)) void pk_run_1() { pk_run_2(); KEEP_FRAME(); }

__attribute__((noinline)) void pk_sleep_5() {
    {
        std::lock_guard lock(g_sleepers_mutex);
        g_sleepers.push_back(pthread_self());
    }
    g_ready.fetch_add(1);
    // Long sleeps: a sleeper that woke up would be running, and signalled,
    // in the default mode. stop() wakes them with SIGUSR1.
    while (!g_stop.load()) {
        struct timespec ts = {30, 0};
        if (nanosleep(&ts, nullptr) != 0 && errno == EINTR && !g_stop.load()) g_eintr.fetch_add(1);
    }
    g_sleepers_left.fetch_sub(1);
    KEEP_FRAME();
}
__attribute__((noinline)) void pk_sleep_4() { pk_sleep_5(); KEEP_FRAME(); }
__attribute__((noinline)) void pk_sleep_3() { pk_sleep_4(); KEEP_FRAME(); }
__attribute__((noinline)) void pk_sleep_2() { pk_sleep_3(); KEEP_FRAME(); }
__attribute__((noinline)) void pk_sleep_1() { pk_sleep_2(); KEEP_FRAME(); }

__attribute__((noinline)) void pk_wait_5() {
    std::unique_lock lock(g_cv_mutex);
    g_ready.fetch_add(1);
    g_cv.wait(lock, [] { return g_stop.load(); });
    KEEP_FRAME();
}
__attribute__((noinline)) void pk_wait_4() { pk_wait_5(); KEEP_FRAME(); }
__attribute__((noinline)) void pk_wait_3() { pk_wait_4(); KEEP_FRAME(); }
__attribute__((noinline)) void pk_wait_2() { pk_wait_3(); KEEP_FRAME(); }
__attribute__((noinline)) void pk_wait_1() { pk_wait_2(); KEEP_FRAME(); }

__attribute__((noinline)) void pk_read_5() {
    g_ready.fetch_add(1);
    char c;
    for (;;) {
        const ssize_t n = read(g_pipe[0], &c, 1);
        if (n < 0 && errno == EINTR) {
            g_eintr.fetch_add(1);
            continue;
        }
        break;  // EOF: stop
    }
    KEEP_FRAME();
}
__attribute__((noinline)) void pk_read_4() { pk_read_5(); KEEP_FRAME(); }
__attribute__((noinline)) void pk_read_3() { pk_read_4(); KEEP_FRAME(); }
__attribute__((noinline)) void pk_read_2() { pk_read_3(); KEEP_FRAME(); }
__attribute__((noinline)) void pk_read_1() { pk_read_2(); KEEP_FRAME(); }

}  // extern "C"

namespace workload {

void start(const Counts& counts) {
    g_stop = false;
    g_ready = 0;
    g_sleepers_left = counts.sleeping;
    struct sigaction sa {};
    sa.sa_handler = on_wake;
    sigaction(SIGUSR1, &sa, nullptr);
    if (pipe(g_pipe) != 0) std::abort();
    struct Kind {
        int n;
        const char* prefix;
        void (*entry)();
    };
    const Kind kinds[] = {{counts.running, "run", pk_run_1},
                          {counts.sleeping, "sleep", pk_sleep_1},
                          {counts.waiting, "wait", pk_wait_1},
                          {counts.reading, "read", pk_read_1}};
    int total = 0;
    for (const Kind& k : kinds) {
        for (int i = 0; i < k.n; ++i, ++total) {
            std::string name = std::string(k.prefix) + "-" + std::to_string(i);
            const bool reg = counts.register_threads;
            g_threads.emplace_back([name, reg, entry = k.entry] {
                if (reg) probekit_thread_register(name.c_str(), nullptr, nullptr);
                entry();
            });
        }
    }
    while (g_ready.load() < total) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    // Every thread is at or about to enter its blocking call; give the
    // blocked ones time to get there.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
}

void stop() {
    g_stop = true;
    {
        std::lock_guard lock(g_cv_mutex);
        g_cv.notify_all();
    }
    close(g_pipe[1]);
    // Repeated: a sleeper may be between its check of g_stop and nanosleep.
    while (g_sleepers_left.load() > 0) {
        {
            std::lock_guard lock(g_sleepers_mutex);
            for (pthread_t t : g_sleepers) pthread_kill(t, SIGUSR1);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    g_sleepers.clear();
    for (auto& t : g_threads) t.join();
    g_threads.clear();
    close(g_pipe[0]);
}

uint64_t eintr_count() { return g_eintr.load(); }

}  // namespace workload
