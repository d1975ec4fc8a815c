// A small request loop instrumented with probekit: what the demo builds,
// lists and traces. `server [ROUNDS] [DELAY_MS]`
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "server_probes.h"

namespace {

struct Cache {
    unsigned entries = 0, hits = 0, lookups = 0;
    // Deliberately costly: it must only run when a tracer listens.
    std::string describe() const {
        return "entries=" + std::to_string(entries) + " hits=" + std::to_string(hits) + " lookups=" + std::to_string(lookups);
    }
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

}  // namespace

int main(int argc, char** argv) {
    int rounds = argc > 1 ? std::atoi(argv[1]) : 5;
    int delay_ms = argc > 2 ? std::atoi(argv[2]) : 200;
    const char* paths[] = {"/index.html", "/missing", "/api/users", "/static/app.js"};
    Cache cache;
    for (int i = 0; i < rounds; ++i) {
        int fd = 7 + i;
        int status = handle(cache, fd, paths[i % 4]);
        std::printf("request %d fd=%d %s -> %d\n", i, fd, paths[i % 4], status);
        std::fflush(stdout);
        DEMO_TICK();
        std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    }
    return 0;
}
