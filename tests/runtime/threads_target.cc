// The 64-thread process of bench/threads and the `probekit threads` test: tests/runtime/threads_workload's
// threads in known call chains (none running, as in the reference:
// blocked in a condition wait, a pipe read or nanosleep; --running N adds
// spinners). Prints its pid, then:
//   - with --dumps N: takes N symbolized dumps in-process and prints one line
//     of JSON per dump (elapsed ns, answer spread ns), then exits;
//   - with --crash segv|abort: installs the panic handler and dies in
//     pk_crash_3 <- pk_crash_2 <- pk_crash_1 (the panic test);
//   - otherwise serves `probekit threads` (and the external signal, to
//     --sink PATH or stderr) and waits for stdin to close, so gdb, eu-stack
//     and probekit can be pointed at it.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <probekit/threads.hpp>
#include <string>
#include <unistd.h>

#include "threads_workload.h"

extern "C" {
__attribute__((noinline)) void pk_crash_3(const char* how) {
    if (std::strcmp(how, "abort") == 0) std::abort();
    *reinterpret_cast<volatile int*>(static_cast<uintptr_t>(std::strlen(how)) * 8) = 1;  // address 0x20 for "segv"
    asm volatile("" ::: "memory");
}
__attribute__((noinline)) void pk_crash_2(const char* how) { pk_crash_3(how); asm volatile("" ::: "memory"); }
__attribute__((noinline)) void pk_crash_1(const char* how) { pk_crash_2(how); asm volatile("" ::: "memory"); }
}

int main(int argc, char** argv) {
    int dumps = 0, running = 0;
    const char* sink = nullptr;
    const char* crash = nullptr;
    bool file_line = false, interrupt_all = false;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--dumps") && i + 1 < argc) dumps = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--running") && i + 1 < argc) running = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--file-line")) file_line = true;
        else if (!std::strcmp(argv[i], "--interrupt-all")) interrupt_all = true;
        else if (!std::strcmp(argv[i], "--sink") && i + 1 < argc) sink = argv[++i];
        else if (!std::strcmp(argv[i], "--crash") && i + 1 < argc) crash = argv[++i];
        else {
            std::fprintf(stderr, "usage: %s [--dumps N] [--running N] [--file-line] [--interrupt-all] [--sink PATH] [--crash segv|abort]\n", argv[0]);
            return 2;
        }
    }
    const int blocked = 64 - running;
    workload::Counts c;
    c.running = running;
    c.sleeping = blocked / 3 + (blocked % 3 > 0);
    c.waiting = blocked / 3 + (blocked % 3 > 1);
    c.reading = blocked / 3;
    workload::start(c);
    // Ready (handlers installed) before the pid is printed: callers signal it next.
    if (dumps == 0 && !crash && probekit_threads_serve(sink) != PROBEKIT_OK) return 1;
    std::printf("%d\n", getpid());
    std::fflush(stdout);
    if (crash) {
        probekit_thread_register("crasher", nullptr, nullptr);
        if (probekit_threads_install_panic(sink) != PROBEKIT_OK) return 1;
        pk_crash_1(crash);
        return 0;
    }
    if (dumps == 0) {
        char b;
        while (read(0, &b, 1) > 0) {
        }
    }
    probekit::threads::options o;
    o.format = PROBEKIT_THREADS_JSON;
    o.file_line = file_line;
    o.mode = interrupt_all ? PROBEKIT_THREADS_INTERRUPT_ALL : PROBEKIT_THREADS_RUNNING;
    for (int i = 0; i < dumps; ++i) {
        const std::string json = probekit::threads::dump(o);
        // elapsed_ns and the answers' spread, without a JSON parser here.
        auto field = [&](const char* key, size_t from) {
            const size_t p = json.find(key, from);
            return p == std::string::npos ? std::string("0") : json.substr(p + std::strlen(key), json.find_first_of(",\n}", p) - p - std::strlen(key));
        };
        unsigned long long lo = ~0ULL, hi = 0;
        int n = 0;
        for (size_t p = json.find("\"answered_after_ns\": "); p != std::string::npos; p = json.find("\"answered_after_ns\": ", p + 1)) {
            const unsigned long long v = std::strtoull(json.c_str() + p + 21, nullptr, 10);
            lo = std::min(lo, v), hi = std::max(hi, v), ++n;
        }
        std::printf("{\"elapsed_ns\": %s, \"captured\": %d, \"answer_spread_ns\": %llu, \"frames\": %d}\n",
                    field("\"elapsed_ns\": ", 0).c_str(), n, n ? hi - lo : 0ULL,
                    [&] { int f = 0; for (size_t p = json.find("\"pc\""); p != std::string::npos; p = json.find("\"pc\"", p + 1)) ++f; return f; }());
    }
    workload::stop();
    return 0;
}
