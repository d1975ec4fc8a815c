// A small request server instrumented with probekit: what the demo builds,
// lists, traces and dumps. `demo-server [ROUNDS] [DELAY_MS] [WORKERS]`
//
// The main thread accepts ROUNDS fake requests, one every DELAY_MS, and hands
// them to WORKERS threads through a queue. Each worker registers for thread
// dumps with a state line (what it is doing), so `probekit threads PID` shows
// the pool; the process serves those dumps (probekit_threads_serve).
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <probekit/threads.hpp>

#include "server_probes.h"

namespace {

struct Cache {
    unsigned entries = 0, hits = 0, lookups = 0;
    // Deliberately costly: it must only run when a tracer listens.
    std::string describe() const {
        return "entries=" + std::to_string(entries) + " hits=" + std::to_string(hits) + " lookups=" + std::to_string(lookups);
    }
};

struct Request {
    int number, fd;
    const char* path;
};

struct Queue {
    std::mutex mutex;
    std::condition_variable ready;
    std::deque<Request> requests;
    bool closed = false;
};

struct Worker {
    int id;
    Cache cache;  // one per worker: the probes, not the cache, are the point
    // Read by the dumping thread while the worker runs. Relaxed: each value
    // stands alone in the dump's state line.
    std::atomic<int> current_fd{-1};
    std::atomic<unsigned> done{0};
};

int handle(Cache& cache, int fd, const char* path) {
    DEMO_REQUEST_START(fd, path);
    auto t0 = std::chrono::steady_clock::now();
    ++cache.lookups;
    bool hit = (fd % 3) != 0;
    if (hit) ++cache.hits; else ++cache.entries;
    int status = path[1] == 'm' ? 404 : 200;
    auto us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count();
    DEMO_REQUEST_DONE(fd, status, static_cast<uint64_t>(us));
    // Gated: the lambdas run only while a tracer has the probe enabled.
    DEMO_CACHE_STATS_GATED([&] { return cache.describe(); }, cache.entries,
                           [&] { return cache.lookups ? double(cache.hits) / cache.lookups : 0.0; });
    return status;
}

// The worker's line in a thread dump.
void worker_state(char* buf, size_t len, void* data) {
    const auto* w = static_cast<const Worker*>(data);
    const int fd = w->current_fd.load(std::memory_order_relaxed);
    const unsigned done = w->done.load(std::memory_order_relaxed);
    if (fd >= 0)
        std::snprintf(buf, len, "handling fd=%d, %u requests done", fd, done);
    else
        std::snprintf(buf, len, "idle, %u requests done", done);
}

void work(Queue& queue, Worker& w) {
    const std::string name = "worker-" + std::to_string(w.id);
    probekit::threads::registration registered(name.c_str(), worker_state, &w);
    for (;;) {
        Request r;
        {
            std::unique_lock lock(queue.mutex);
            queue.ready.wait(lock, [&] { return queue.closed || !queue.requests.empty(); });
            if (queue.requests.empty()) return;
            r = queue.requests.front();
            queue.requests.pop_front();
        }
        w.current_fd.store(r.fd, std::memory_order_relaxed);
        int status = handle(w.cache, r.fd, r.path);
        std::printf("request %d fd=%d %s -> %d (worker-%d)\n", r.number, r.fd, r.path, status, w.id);
        std::fflush(stdout);
        w.current_fd.store(-1, std::memory_order_relaxed);
        w.done.fetch_add(1, std::memory_order_relaxed);
        probekit::threads::progress();
    }
}

}  // namespace

int main(int argc, char** argv) {
    int rounds = argc > 1 ? std::atoi(argv[1]) : 5;
    int delay_ms = argc > 2 ? std::atoi(argv[2]) : 200;
    int nworkers = argc > 3 ? std::atoi(argv[3]) : 2;
    if (nworkers < 1) nworkers = 1;
    // `probekit threads PID` and `kill -WINCH PID` (dump to stderr) work from
    // here on; a process that does not call it is never signalled by the CLI.
    if (int r = probekit_threads_serve(nullptr); r != PROBEKIT_OK)
        std::fprintf(stderr, "demo-server: no thread dumps: %s\n", probekit_threads_strerror(r));

    const char* paths[] = {"/index.html", "/missing", "/api/users", "/static/app.js"};
    Queue queue;
    std::vector<Worker> workers(static_cast<size_t>(nworkers));
    std::vector<std::thread> threads;
    for (int i = 0; i < nworkers; ++i) {
        workers[static_cast<size_t>(i)].id = i;
        threads.emplace_back(work, std::ref(queue), std::ref(workers[static_cast<size_t>(i)]));
    }
    for (int i = 0; i < rounds; ++i) {
        {
            std::lock_guard lock(queue.mutex);
            queue.requests.push_back({i, 7 + i, paths[i % 4]});
        }
        queue.ready.notify_one();
        DEMO_TICK();
        std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    }
    {
        std::lock_guard lock(queue.mutex);
        queue.closed = true;
    }
    queue.ready.notify_all();
    for (auto& t : threads) t.join();
    return 0;
}
