#include "runtime/threads/dump.h"

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <csignal>
#include <ctime>
#include <map>
#include <mutex>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime/own_probes.h"
#include "runtime/threads/capture.h"
#include "runtime/threads/slot.h"

namespace probekit::threads {
namespace {

thread_local bool t_in_dump = false;

uint64_t now_ns() {
    struct timespec ts {};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

// What the previous dump saw of each thread, for "looks stuck".
struct Previous {
    uint64_t cpu_ns = 0;
    uint64_t switches = 0;
    uint64_t progress = 0;
    bool had_progress = false;
};

// State used by the service thread, which may still run while the process
// exits: allocated once and never destroyed, so no static destructor races
// with it.
template <class T>
T& immortal() {
    static T* p = new T;
    return *p;
}

// Serialized by run()'s mutex (one collector at a time).
auto& g_previous = immortal<std::map<pid_t, Previous>>();
uint64_t g_dump_count = 0;
Unwinder* g_unwinder = nullptr;

// Sharing: a request that arrives while a dump with the same options is being
// taken gets that dump instead of starting another one.
std::mutex g_share_mutex;
std::condition_variable& g_share_cv = immortal<std::condition_variable>();
bool g_in_flight = false;
DumpOptions g_in_flight_options;
uint64_t g_started = 0, g_finished = 0;
std::shared_ptr<const Dump>& g_last = immortal<std::shared_ptr<const Dump>>();

void judge_progress(ThreadReport& r, const Slot* slot) {
    Previous now{r.task.cpu_ns, r.task.switches, slot ? slot->progress.load(std::memory_order_relaxed) : 0,
                 slot != nullptr};
    auto it = g_previous.find(r.task.tid);
    if (it != g_previous.end()) {
        const Previous& before = it->second;
        if (now.had_progress && before.had_progress && now.progress == before.progress && now.progress != 0 &&
            now.cpu_ns > before.cpu_ns + 1000000)
            r.stuck = "ran " + std::to_string((now.cpu_ns - before.cpu_ns) / 1000000) +
                      " ms of CPU without marking progress since the previous dump";
        else if (r.task.state != 'R' && now.switches != 0 && now.switches == before.switches)
            r.stuck = "blocked, not woken up since the previous dump";
    }
    g_previous[r.task.tid] = now;
}

// The signal protocol. Called with the registry mutex held, so slots cannot be
// freed (unregister waits) while they are armed or read.
void collect(Dump& d, pid_t pre_captured) {
    const int sig = capture_signal();
    const pid_t self = static_cast<pid_t>(syscall(SYS_gettid));
    const bool interrupt_all = d.options.mode == PROBEKIT_THREADS_INTERRUPT_ALL;
    std::vector<std::pair<size_t, Slot*>> armed, to_signal;
    const TaskDir tasks;
    for (pid_t tid : tasks.list()) {
        ThreadReport r;
        r.task = tasks.read_state(tid, sig);
        r.requester = tid == self;
        Slot* slot = find_slot(tid);
        r.registered = slot != nullptr;
        r.name = slot && !slot->name.empty() ? slot->name : r.task.comm;
        if (r.task.gone) {
            r.capture = Capture::exited;
        } else if (tid == pre_captured && slot) {
            r.capture = Capture::captured;
            armed.emplace_back(d.threads.size(), slot);
        } else if (!slot) {
            r.capture = Capture::unregistered;
        } else if (r.task.state == 'T' || r.task.state == 't') {
            r.capture = Capture::stopped;
        } else if (r.task.state == 'Z' || r.task.state == 'X') {
            r.capture = Capture::exited;
        } else if (!interrupt_all && r.task.state != 'R' && !r.requester) {
            r.capture = Capture::not_signalled;
        } else {
            int st = slot->state.load(std::memory_order_acquire);
            if (st == kDone) slot->state.store(kIdle, std::memory_order_relaxed), st = kIdle;  // a late answer
            if (st != kIdle) {
                r.capture = Capture::busy;
            } else {
                r.capture = Capture::captured;
                to_signal.emplace_back(d.threads.size(), slot);
            }
        }
        d.threads.push_back(std::move(r));
    }
    // Signalled together, after all the /proc reads, so that the answers are
    // as close to one instant as possible. The requester signals itself too:
    // the handler runs before tgkill returns, and its stack shows where the
    // dump came from.
    static uint32_t generation = 0;  // run()'s mutex: one collector at a time
    const uint32_t gen = ++generation & 0xffffu;
    g_pending_answers.store(pending_word(gen, static_cast<uint32_t>(to_signal.size())), std::memory_order_release);
    for (auto& [index, slot] : to_signal) {
        ThreadReport& r = d.threads[index];
        slot->generation = gen;
        slot->state.store(kArmed, std::memory_order_release);
        if (syscall(SYS_tgkill, d.pid, r.task.tid, sig) == 0) {
            armed.emplace_back(index, slot);
        } else {
            const int err = errno;
            int st = kArmed;
            // Not delivered, so not counted by a handler (unless a signal left
            // pending from an earlier dump ran it meanwhile: then it counted).
            if (slot->state.compare_exchange_strong(st, kIdle, std::memory_order_acq_rel)) count_answer(gen);
            else armed.emplace_back(index, slot);
            if (st == kArmed) r.capture = err == ESRCH ? Capture::exited : Capture::no_answer;
        }
    }
    // A thread whose mask blocks the signal is signalled all the same: the
    // mask may be a passing one (the thread is still in the handler of the
    // previous dump), and if not, the signal stays pending until the thread
    // unblocks it, outside any system call, and its handler then finds its
    // slot idle and returns. After the bound it is reported from SigBlk.
    // Bounded wait for the last answer.
    const uint64_t deadline = now_ns() + static_cast<uint64_t>(d.options.timeout_ms) * 1000000u;
    for (;;) {
        const int w = g_pending_answers.load(std::memory_order_acquire);
        if ((w & 0xffff) == 0) break;
        const uint64_t now = now_ns();
        if (now >= deadline) break;
        futex_wait(&g_pending_answers, w, static_cast<long>(deadline - now));
    }
    // Answers that come after this are not counted (count_answer sees 0).
    g_pending_answers.store(pending_word(gen, 0), std::memory_order_release);
    for (auto& [index, slot] : armed) {
        ThreadReport& r = d.threads[index];
        int st = kArmed;
        if (slot->state.compare_exchange_strong(st, kIdle, std::memory_order_acq_rel)) {
            // No answer: say why, as far as the kernel knows now.
            const TaskInfo again = tasks.read_state(r.task.tid, sig);
            r.capture = again.gone ? Capture::exited
                        : (again.state == 'T' || again.state == 't') ? Capture::stopped
                        : again.blocks_signal ? Capture::signal_blocked
                                              : Capture::no_answer;
            if (r.capture != Capture::no_answer) r.note = "no answer within " + std::to_string(d.options.timeout_ms) + " ms";
            slot = nullptr;
        } else if (st == kCapturing) {
            r.capture = Capture::busy;
            slot = nullptr;
        }
    }
    // Unwind the answers (outside any handler), then read what the kernel
    // says about every thread.
    if (!g_unwinder) g_unwinder = new Unwinder;  // kept for the life of the process: its caches are the point
    const bool unwinder_ok = g_unwinder->refresh(&d.error);
    for (auto& [index, slot] : armed) {
        if (!slot) continue;
        ThreadReport& r = d.threads[index];
        r.answered_ns = slot->answered_ns;
        if (unwinder_ok) r.frames = g_unwinder->unwind(*slot, d.options.file_line, &r.note);
        slot->state.store(kIdle, std::memory_order_release);
    }
    for (ThreadReport& r : d.threads) {
        if (r.task.gone) continue;
        if (!read_cpu_time(r.task)) {
            if (r.capture != Capture::captured) r.capture = Capture::exited;
            continue;
        }
        // A captured thread's stack shows where it is; the others get the
        // kernel's view of their blocked call.
        if (r.capture != Capture::captured) tasks.read_details(r.task);
        Slot* slot = find_slot(r.task.tid);
        if (slot && slot->state_fn) {
            char buf[1024];
            buf[0] = '\0';
            slot->state_fn(buf, sizeof buf, slot->state_data);
            buf[sizeof buf - 1] = '\0';
            r.app_state = buf;
        }
        judge_progress(r, slot);
    }
}

std::shared_ptr<const Dump> run(const DumpOptions& options, pid_t pre_captured, const std::string& header) {
    static std::mutex take_mutex;
    std::lock_guard take(take_mutex);
    auto d = std::make_shared<Dump>();
    d->number = ++g_dump_count;
    d->pid = getpid();
    d->options = options;
    d->header = header;
    d->started_ns = now_ns();
    {
        std::lock_guard lock(g_registry_mutex);
        collect(*d, pre_captured);
    }
    if (pre_captured)
        std::stable_partition(d->threads.begin(), d->threads.end(),
                              [&](const ThreadReport& r) { return r.task.tid == pre_captured; });
    d->elapsed_ns = now_ns() - d->started_ns;
    d->text = format_text(*d);
    publish_dump(d->text, static_cast<int>(d->threads.size()));
    return d;
}

struct InDump {
    InDump() { t_in_dump = true; }
    ~InDump() { t_in_dump = false; }
};

}  // namespace

bool dump_in_progress_here() { return t_in_dump; }

const char* capture_name(Capture c) {
    switch (c) {
    case Capture::captured: return "captured";
    case Capture::not_signalled: return "not signalled (blocked in the kernel)";
    case Capture::unregistered: return "not registered";
    case Capture::signal_blocked: return "not responding: the capture signal is blocked";
    case Capture::no_answer: return "not responding";
    case Capture::stopped: return "stopped";
    case Capture::exited: return "exited during the dump";
    case Capture::busy: return "busy: still answering an earlier dump";
    }
    return "?";
}

std::shared_ptr<const Dump> take_dump(const DumpOptions& options, int* status) {
    if (t_in_dump || in_probekit_handler()) {
        *status = PROBEKIT_THREADS_E_BUSY;
        return nullptr;
    }
    InDump guard;
    std::unique_lock lock(g_share_mutex);
    for (;;) {
        if (g_in_flight && g_in_flight_options == options) {
            const uint64_t target = g_started;
            g_share_cv.wait(lock, [&] { return g_finished >= target; });
            if (g_last && g_last->options == options) return g_last;
            continue;
        }
        if (!g_in_flight) break;
        g_share_cv.wait(lock, [] { return !g_in_flight; });
    }
    g_in_flight = true;
    g_in_flight_options = options;
    ++g_started;
    lock.unlock();
    std::shared_ptr<const Dump> d;
    try {
        d = run(options, 0, "");
    } catch (...) {
        d = nullptr;
    }
    lock.lock();
    g_last = d;
    g_in_flight = false;
    ++g_finished;
    g_share_cv.notify_all();
    *status = d ? PROBEKIT_OK : PROBEKIT_E_NO_MEMORY;
    return d;
}

std::shared_ptr<const Dump> take_panic_dump(pid_t first, const std::string& header) {
    InDump guard;
    DumpOptions options;
    options.mode = PROBEKIT_THREADS_INTERRUPT_ALL;  // the process is about to die: EINTR no longer matters
    auto d = std::const_pointer_cast<Dump>(run(options, first, header));
    return d;
}

void publish_dump(const std::string& text, int nthreads) {
    // std::string keeps a NUL after the text: the probe's string argument.
    rt::own_probe_thread_dump(text.c_str(), text.size(), nthreads);
}

}  // namespace probekit::threads
