// Thread dumps (docs/threads.md) against a live 64-thread workload in this
// process: every thread named, the known call chains present, no EINTR in the
// default mode, repeated and concurrent dumps, a thread blocking the signal,
// dlopen/dlclose and exception loops while dumping.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <dlfcn.h>
#include <probekit/threads.hpp>
#include <regex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "threads_workload.h"

#if defined(__SANITIZE_THREAD__)
// TSan runs a signal handler late, at the thread's next intercepted call,
// with the context saved at delivery: the copied stack no longer matches the
// registers, so frames are not checked there (the protocol still is).
// It also defers the handler of a thread blocked in read(2) (not one of its
// "blocking" interceptors) until the read returns: pipe readers never answer.
constexpr bool kFramesReliable = false;
constexpr bool kReadersAnswer = false;
#else
constexpr bool kFramesReliable = true;
constexpr bool kReadersAnswer = true;
#endif

namespace {

int count(const std::string& text, const std::string& what) {
    int n = 0;
    for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
    return n;
}

// The lines of one thread's entry, from its header to the next "Thread ".
std::string entry_of(const std::string& text, const std::string& name) {
    const size_t at = text.find("\"" + name + "\"");
    if (at == std::string::npos) return "";
    const size_t end = text.find("\nThread ", at);
    return text.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

struct Workload {
    explicit Workload(workload::Counts c = {}) { workload::start(c); }
    ~Workload() { workload::stop(); }
};

}  // namespace

TEST_CASE("every thread of 64 is named, with its call chain, in interrupt-all mode") {
    Workload w;
    probekit::threads::options o;
    o.mode = PROBEKIT_THREADS_INTERRUPT_ALL;
    const std::string text = probekit::threads::dump(o);
    INFO(text);
    for (const char* kind : {"run", "sleep", "wait", "read"}) {
        for (int i = 0; i < (kind[0] == 'r' && kind[1] == 'u' ? 4 : 20); ++i) {
            const std::string name = std::string(kind) + "-" + std::to_string(i);
            const std::string e = entry_of(text, name);
            REQUIRE(!e.empty());
            if (kReadersAnswer || std::string(kind) != "read")
                CHECK(e.find(": not") == std::string::npos);  // captured, not "not responding"
            if (kFramesReliable)
                for (int level = 1; level <= 5; ++level)
                    CHECK(e.find(" pk_" + std::string(kind) + "_" + std::to_string(level) + "+0x") != std::string::npos);
        }
    }
    if (kFramesReliable) {
        // libc frames are unwound through CFI too: the blocking calls appear.
        CHECK(entry_of(text, "sleep-0").find("nanosleep") != std::string::npos);
        CHECK(entry_of(text, "read-0").find(" read+0x") != std::string::npos);
        CHECK(entry_of(text, "wait-0").find("pthread_cond_wait") != std::string::npos);
    }
    // The documented effect of this mode: sleepers see EINTR.
    CHECK(workload::eintr_count() > 0);
}

TEST_CASE("the default mode interrupts nobody and reports blocked threads from /proc") {
    Workload w;
    const uint64_t before = workload::eintr_count();
    std::string text;
    for (int i = 0; i < 20; ++i) text = probekit::threads::dump();
    INFO(text);
    CHECK(workload::eintr_count() == before);
    const std::string run = entry_of(text, "run-3");
    CHECK(run.find(" R cpu ") != std::string::npos);
    CHECK(run.find(": not") == std::string::npos);
    if (kFramesReliable) CHECK(run.find(" pk_run_5+0x") != std::string::npos);
    const std::string sleeper = entry_of(text, "sleep-3");
    CHECK(sleeper.find("nanosleep (wchan") != std::string::npos);  // glibc: clock_nanosleep
    CHECK(sleeper.find("not signalled (blocked in the kernel)") != std::string::npos);
    CHECK(entry_of(text, "read-3").find("blocked in read") != std::string::npos);
    CHECK(entry_of(text, "wait-3").find("blocked in futex") != std::string::npos);
    CHECK(count(text, "\nThread ") >= 64);
}

TEST_CASE("100 dumps in a row, then 2 x 50 concurrently") {
    Workload w({1, 1, 1, kReadersAnswer ? 1 : 0, true});
    probekit::threads::options o;
    o.mode = PROBEKIT_THREADS_INTERRUPT_ALL;
    for (int i = 0; i < 100; ++i) {
        const std::string text = probekit::threads::dump(o);
        INFO(text);
        REQUIRE(count(text, "not responding") == 0);
    }
    std::atomic<int> ok{0};
    auto requester = [&] {
        probekit::threads::registration reg("requester");
        for (int i = 0; i < 50; ++i)
            if (probekit::threads::dump(o).find("\"run-0\"") != std::string::npos) ok.fetch_add(1);
    };
    std::thread a(requester), b(requester);
    a.join();
    b.join();
    CHECK(ok.load() == 100);
}

TEST_CASE("a thread that blocks the signal is reported as not responding, within the bound") {
    Workload w({1, 0, 0, 0, true});
    std::atomic<bool> stop{false}, ready{false};
    std::thread blocker([&] {
        probekit::threads::registration reg("blocker");
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGWINCH);
        pthread_sigmask(SIG_BLOCK, &set, nullptr);
        ready = true;
        while (!stop) std::this_thread::yield();
    });
    while (!ready) std::this_thread::yield();
    probekit::threads::options o;
    o.mode = PROBEKIT_THREADS_INTERRUPT_ALL;
    o.timeout_ms = 100;
    const std::string text = probekit::threads::dump(o);
    stop = true;
    blocker.join();
    INFO(text);
    CHECK(entry_of(text, "blocker").find("not responding: the capture signal is blocked") != std::string::npos);
    CHECK(entry_of(text, "run-0").find(": not") == std::string::npos);
}

TEST_CASE("threads that never registered are listed with their blocked call") {
    Workload w({0, 2, 0, 0, false});
    const std::string text = probekit::threads::dump();
    INFO(text);
    CHECK(count(text, "[unregistered] blocked in clock_nanosleep") >= 2);
}

TEST_CASE("dumps while threads dlopen/dlclose and throw exceptions in loops: no deadlock") {
    Workload w({1, 1, 1, kReadersAnswer ? 1 : 0, true});
    std::atomic<bool> stop{false};
    std::atomic<long> loads{0}, throws{0};
    std::thread loader([&] {
        probekit::threads::registration reg("dlopen-loop");
        while (!stop) {
            // libdw is linked here; libm is a real object to map and unmap.
            if (void* h = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL)) {
                dlclose(h);
                loads.fetch_add(1);
            }
            if (void* h = dlopen(PROBEKIT_TEST_MODULE, RTLD_NOW | RTLD_LOCAL)) dlclose(h);
        }
    });
    std::thread thrower([&] {
        probekit::threads::registration reg("throw-loop");
        while (!stop) {
            try {
                throw std::runtime_error("x");
            } catch (const std::exception&) {
                throws.fetch_add(1);
            }
        }
    });
    // Both loops running before the dumps (30 dumps take about 0.1 s: on a
    // loaded machine the threads may not even have started by then).
    while (loads.load() == 0 || throws.load() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    probekit::threads::options o;
    o.mode = PROBEKIT_THREADS_INTERRUPT_ALL;
    for (int i = 0; i < 30; ++i) {
        const std::string text = probekit::threads::dump(o);
        const std::string loader_entry = entry_of(text, "dlopen-loop"), thrower_entry = entry_of(text, "throw-loop");
        REQUIRE(!loader_entry.empty());
        REQUIRE(!thrower_entry.empty());
        REQUIRE(loader_entry.find(": not") == std::string::npos);
        REQUIRE(thrower_entry.find(": not") == std::string::npos);
    }
    stop = true;
    loader.join();
    thrower.join();
    CHECK(loads.load() > 0);
    CHECK(throws.load() > 0);
}

TEST_CASE("an object dlopened after a dump is symbolized in the next dump") {
    // The dump reads the loaded objects again only when the executable
    // mappings changed since the previous one: this is the change.
    probekit::threads::options o;
    o.mode = PROBEKIT_THREADS_INTERRUPT_ALL;
    probekit::threads::dump(o);
    REQUIRE(dlopen(PROBEKIT_TEST_MODULE, RTLD_NOW | RTLD_NOLOAD) == nullptr);
    void* module = dlopen(PROBEKIT_TEST_MODULE, RTLD_NOW | RTLD_LOCAL);
    REQUIRE(module != nullptr);
    auto block = reinterpret_cast<int (*)(int)>(dlsym(module, "threads_dl_module_block"));
    REQUIRE(block != nullptr);
    int fds[2];
    REQUIRE(pipe(fds) == 0);
    std::atomic<pid_t> tid{0};
    std::thread t([&] {
        probekit::threads::registration reg("in-module");
        tid = gettid();
        block(fds[0]);
    });
    // Until the thread sleeps in the module's read.
    for (int i = 0; i < 500; ++i) {
        if (tid != 0) {
            char path[64], stat[512] = {};
            std::snprintf(path, sizeof path, "/proc/self/task/%d/stat", tid.load());
            if (FILE* f = std::fopen(path, "r")) {
                const size_t n = std::fread(stat, 1, sizeof stat - 1, f);
                std::fclose(f);
                const char* close = std::strrchr(stat, ')');
                if (n && close && close[2] == 'S') break;
            }
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    const std::string text = probekit::threads::dump(o);
    INFO(text);
    const std::string e = entry_of(text, "in-module");
    REQUIRE(!e.empty());
    if (kFramesReliable && kReadersAnswer) {
        CHECK(e.find(" threads_dl_module_block+0x") != std::string::npos);
        CHECK(e.find("libthreads_dl_module.so+0x") != std::string::npos);
    }
    REQUIRE(write(fds[1], "x", 1) == 1);
    t.join();
    close(fds[0]);
    close(fds[1]);
    dlclose(module);
}

namespace {
std::mutex g_stage_mutex;
std::condition_variable g_stage_cv;
int g_stage = 0;     // what the main thread asks for: 1 (a), 2 (b), 3 (exit)
int g_in_stage = 0;  // where the thread is
}  // namespace

extern "C" {
__attribute__((noinline)) void pk_stage_a(std::unique_lock<std::mutex>* l) {
    g_in_stage = 1;
    g_stage_cv.wait(*l, [] { return g_stage != 1; });
    asm volatile("" ::: "memory");
}
__attribute__((noinline)) void pk_stage_b(std::unique_lock<std::mutex>* l) {
    g_in_stage = 2;
    g_stage_cv.wait(*l, [] { return g_stage != 2; });
    asm volatile("" ::: "memory");
}
}

TEST_CASE("a thread whose stack changed between dumps shows its new stack (unwound stacks are reused only unchanged)") {
    probekit::threads::options o;
    o.mode = PROBEKIT_THREADS_INTERRUPT_ALL;
    std::unique_lock lock(g_stage_mutex);
    g_stage = 1;
    std::thread t([] {
        probekit::threads::registration reg("staged");
        std::unique_lock l(g_stage_mutex);
        while (g_stage != 3) {
            if (g_stage == 1) pk_stage_a(&l);
            else if (g_stage == 2) pk_stage_b(&l);
        }
    });
    // Holding the mutex with g_in_stage set: the thread waits in that stage.
    auto reach = [&](int stage) {
        g_stage = stage;
        g_stage_cv.notify_all();
        while (g_in_stage != stage) {
            lock.unlock();
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
            lock.lock();
        }
        lock.unlock();
    };
    reach(1);
    const std::string a1 = entry_of(probekit::threads::dump(o), "staged");
    const std::string a2 = entry_of(probekit::threads::dump(o), "staged");
    lock.lock();
    reach(2);
    const std::string b1 = entry_of(probekit::threads::dump(o), "staged");
    const std::string b2 = entry_of(probekit::threads::dump(o), "staged");
    INFO(a1 << "\n" << b1);
    REQUIRE(!a1.empty());
    REQUIRE(!b1.empty());
    if (kFramesReliable) {
        CHECK(a1.find(" pk_stage_a+0x") != std::string::npos);
        CHECK(a1.find(" pk_stage_b+0x") == std::string::npos);
        CHECK(b1.find(" pk_stage_b+0x") != std::string::npos);
        CHECK(b1.find(" pk_stage_a+0x") == std::string::npos);
        // Unchanged between two dumps: the same frames (the second from the cache).
        auto frames = [](const std::string& e) {
            std::string out;
            for (size_t p = e.find("    #"); p != std::string::npos; p = e.find("    #", p + 1))
                out += e.substr(p, e.find('\n', p) - p) + "\n";
            return out;
        };
        CHECK(frames(a2) == frames(a1));
        CHECK(frames(b2) == frames(b1));
    }
    lock.lock();
    g_stage = 3;
    g_stage_cv.notify_all();
    lock.unlock();
    t.join();
}

namespace {
int g_nested_status = 1;
void nested_dump(char* buf, size_t len, void*) {
    char tiny[16];
    g_nested_status = probekit_threads_dump(tiny, sizeof tiny, nullptr, nullptr);
    std::snprintf(buf, len, "queue depth 7");
}
}  // namespace

TEST_CASE("a state callback's text is shown, and a dump from inside a dump is refused") {
    std::atomic<bool> stop{false}, ready{false};
    std::thread t([&] {
        probekit::threads::registration reg("with-state", nested_dump, nullptr);
        ready = true;
        while (!stop) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    });
    while (!ready) std::this_thread::yield();
    const std::string text = probekit::threads::dump();
    stop = true;
    t.join();
    CHECK(entry_of(text, "with-state").find("state: queue depth 7") != std::string::npos);
    CHECK(g_nested_status == PROBEKIT_THREADS_E_BUSY);
}

TEST_CASE("C API: a too small buffer says how much is needed; JSON parses as one object per thread") {
    char small[8];
    size_t needed = 0;
    CHECK(probekit_threads_dump(small, sizeof small, &needed, nullptr) == PROBEKIT_THREADS_E_TOO_SMALL);
    CHECK(needed > sizeof small);
    probekit::threads::options o;
    o.format = PROBEKIT_THREADS_JSON;
    const std::string json = probekit::threads::dump(o);
    CHECK(json.find("\"threads\": [") != std::string::npos);
    CHECK(json.find("\"tid\": ") != std::string::npos);
}

extern "C" __attribute__((noinline)) void pk_spin_without_progress(std::atomic<bool>* stop) {
    std::mutex own;  // an intercepted call per round, for TSan's deferred signals
    volatile uint64_t x = 0;
    while (!stop->load(std::memory_order_relaxed)) {
        for (int i = 0; i < 1000; ++i) x = x + 1;
        own.lock();
        own.unlock();
    }
}

// Last: the watchdog stays on for the rest of the process.
TEST_CASE("watchdog: a thread that runs without progress is dumped to the sink") {
    char dir[] = "/tmp/probekit-watchdog-XXXXXX";
    REQUIRE(mkdtemp(dir));
    const std::string path = std::string(dir) + "/dump-%n.txt";
    REQUIRE(probekit_threads_watchdog(50, 0, path.c_str()) == PROBEKIT_OK);
    std::atomic<bool> stop{false};
    std::thread spinner([&] {
        probekit::threads::registration reg("spinner");
        probekit::threads::progress();  // judged from now on
        pk_spin_without_progress(&stop);
    });
    // A sleeping registered thread: its CPU timer never fires.
    std::atomic<bool> ready{false};
    std::thread idle([&] {
        probekit::threads::registration reg("idle");
        probekit::threads::progress();
        ready = true;
        while (!stop) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    });
    std::string text;
    for (int i = 0; i < 600 && text.find("\"spinner\"") == std::string::npos; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        // %n is the process's dump number: whatever came before in this test run.
        for (const auto& e : std::filesystem::directory_iterator(dir)) {
            if (FILE* f = std::fopen(e.path().c_str(), "r")) {
                char buf[65536];
                const size_t n = std::fread(buf, 1, sizeof buf, f);
                std::fclose(f);
                text.assign(buf, n);
            }
        }
    }
    stop = true;
    spinner.join();
    idle.join();
    INFO(text);
    CHECK(text.find("\"spinner\" R") != std::string::npos);
    if (kFramesReliable) CHECK(entry_of(text, "spinner").find(" pk_spin_without_progress+0x") != std::string::npos);
    std::filesystem::remove_all(dir);
}
