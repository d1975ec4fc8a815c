// `probekit trace`: attach kernel uprobes to the probes of a running
// process (-p) or of a command started here (-c), print each hit with its
// arguments decoded, or count them (src/trace/).
#include <fcntl.h>
#include <linux/capability.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <wordexp.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "elf/inventory.h"
#include "tools/probekit/commands.h"
#include "trace/output.h"
#include "trace/plan.h"
#include "trace/session.h"
#include "util/process.h"

namespace probekit::cli {
namespace {

struct TraceArgs {
    pid_t pid = 0;
    std::string command;
    std::vector<std::string> globs;
    std::string format = "text";
    bool count = false;
    double duration = 0;
    size_t buffer_pages = 0;  // 0: not given (trace::default_buffer_pages)
    size_t string_size = 256;
    bool buffer_pages_given = false;
    bool uprobe_pmu = false;
};

constexpr const char* kWho = "probekit trace";

int fail(const std::string& msg) {
    std::fprintf(stderr, "%s: error: %s\n", kWho, msg.c_str());
    return 1;
}

// Root, or CAP_PERFMON / CAP_SYS_ADMIN in the effective set: what the
// kernel asks of uprobe perf events. Checked first so that an operator
// learns it at once, not after the binaries were read.
bool may_trace(std::string& missing) {
    if (geteuid() == 0) return true;
    __user_cap_header_struct hdr{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[2]{};
    if (syscall(SYS_capget, &hdr, data) == 0) {
        auto has = [&](int cap) { return (data[cap / 32].effective >> (cap % 32)) & 1; };
        constexpr int kPerfmon = 38;  // CAP_PERFMON, Linux 5.8; older headers lack the name
        if (has(kPerfmon) || has(CAP_SYS_ADMIN)) return true;
    }
    missing = "tracing needs root, or CAP_PERFMON (Linux 5.8+) or CAP_SYS_ADMIN, to open uprobes through "
              "perf_event_open, plus CAP_SYS_PTRACE to read string arguments of another user's process; "
              "run it with sudo";
    return false;
}

// Whether `pid` is a process that has not exited (a zombie has).
bool alive(pid_t pid) {
    std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
    std::string stat;
    std::getline(f, stat);
    const auto close = stat.rfind(')');
    return f && close != std::string::npos && close + 2 < stat.size() && stat[close + 2] != 'Z' && stat[close + 2] != 'X';
}

// The command's words, split as a shell would (quotes, no substitution),
// and its program looked up in PATH.
bool split_command(const std::string& cmd, std::vector<std::string>& argv, std::string& error) {
    wordexp_t w{};
    const int rc = wordexp(cmd.c_str(), &w, WRDE_NOCMD | WRDE_UNDEF);
    if (rc != 0) {
        error = "-c '" + cmd + "': cannot split the command (" +
                (rc == WRDE_CMDSUB ? std::string("command substitution is not run") : "unbalanced quotes or a bad character") +
                "); give the program and its arguments only";
        if (rc == WRDE_NOSPACE) wordfree(&w);
        return false;
    }
    for (size_t i = 0; i < w.we_wordc; ++i) argv.emplace_back(w.we_wordv[i]);
    wordfree(&w);
    if (argv.empty()) {
        error = "-c: empty command";
        return false;
    }
    if (argv[0].find('/') == std::string::npos) {
        const char* path = std::getenv("PATH");
        std::string dirs = path ? path : "/usr/bin:/bin";
        size_t pos = 0;
        while (pos <= dirs.size()) {
            const size_t colon = std::min(dirs.find(':', pos), dirs.size());
            const std::string cand = (colon == pos ? std::string(".") : dirs.substr(pos, colon - pos)) + "/" + argv[0];
            if (access(cand.c_str(), X_OK) == 0) {
                argv[0] = cand;
                return true;
            }
            pos = colon + 1;
        }
        error = "-c: " + argv[0] + ": command not found in PATH";
        return false;
    }
    if (access(argv[0].c_str(), X_OK) != 0) {
        error = "-c: " + argv[0] + ": " + std::strerror(errno);
        return false;
    }
    return true;
}

// The program and the shared libraries the dynamic loader will map for it
// (ldd's "name => /path" lines): their probes are attached before the
// program runs, so that no early hit is missed. Libraries it dlopen()s are
// not seen (use -p on the running process for those).
std::vector<elf::ObjectReport> command_objects(const std::string& exe, std::string& error) {
    std::vector<elf::ObjectReport> out;
    auto main = elf::inspect_file(exe, error);
    if (!main) return out;
    out.push_back(std::move(*main));
    auto r = util::run({"ldd", exe}, true);
    if (!r.started || r.exit_status != 0) return out;  // static, or no ldd: the program alone
    size_t pos = 0;
    while (pos < r.out.size()) {
        const size_t eol = std::min(r.out.find('\n', pos), r.out.size());
        const std::string line = r.out.substr(pos, eol - pos);
        pos = eol + 1;
        const auto arrow = line.find("=> /");
        if (arrow == std::string::npos) continue;
        const std::string lib = line.substr(arrow + 3, line.find(" (", arrow) - arrow - 3);
        std::string e;
        if (auto o = elf::inspect_file(lib, e); o && !o->probes.probes.empty()) out.push_back(std::move(*o));
    }
    return out;
}

double seconds_since(const timespec& t0) {
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    return static_cast<double>(now.tv_sec - t0.tv_sec) + static_cast<double>(now.tv_nsec - t0.tv_nsec) / 1e9;
}

int run_trace(const TraceArgs& a) {
    std::string error;
    if (!may_trace(error)) return fail(error);
    if ((a.pid > 0) == !a.command.empty()) {
        std::fprintf(stderr, "%s: error: give exactly one of -p PID and -c 'CMD ARGS'\n", kWho);
        return 2;
    }
    if (a.buffer_pages_given && (a.buffer_pages == 0 || (a.buffer_pages & (a.buffer_pages - 1)) != 0)) {
        std::fprintf(stderr, "%s: error: --buffer-pages %zu: must be a power of two\n", kWho, a.buffer_pages);
        return 2;
    }

    // What to attach to.
    std::vector<elf::ObjectReport> objects;
    std::vector<std::string> argv;
    std::string where;
    if (a.pid > 0) {
        if (::kill(a.pid, 0) != 0 && errno == ESRCH) return fail("no process with PID " + std::to_string(a.pid));
        auto objs = elf::inspect_process(a.pid, error);
        if (!objs) return fail(error);
        objects = std::move(*objs);
        where = "process " + std::to_string(a.pid);
    } else {
        if (!split_command(a.command, argv, error)) return fail(error);
        objects = command_objects(argv[0], error);
        if (objects.empty()) return fail(error);
        where = argv[0];
    }
    auto plan = trace::make_plan(objects, a.globs, where, error);
    if (!plan) return fail(error);

    // Signals are taken through a signalfd, in the poll loop: the summary is
    // printed by ordinary code, never from a handler.
    sigset_t sigs;
    sigemptyset(&sigs);
    // SIGPIPE too (stdout into `| head` that has exited): trace then ends
    // like on Ctrl-C, deleting its tracefs events, instead of being killed.
    for (int s : {SIGINT, SIGTERM, SIGHUP, SIGCHLD, SIGPIPE}) sigaddset(&sigs, s);
    sigprocmask(SIG_BLOCK, &sigs, nullptr);
    const int sfd = signalfd(-1, &sigs, SFD_CLOEXEC | SFD_NONBLOCK);

    // -c: the child waits on a pipe until the uprobes are in place, then
    // execs. Closing the pipe without a byte tells it to give up.
    pid_t target = a.pid, child = -1;
    bool held = false;
    int go[2] = {-1, -1};
    if (!argv.empty()) {
        if (pipe2(go, O_CLOEXEC) != 0) return fail(std::string("pipe: ") + std::strerror(errno));
        child = fork();
        if (child < 0) return fail(std::string("fork: ") + std::strerror(errno));
        if (child == 0) {
            sigprocmask(SIG_UNBLOCK, &sigs, nullptr);
            ::close(go[1]);
            char c = 0;
            if (::read(go[0], &c, 1) != 1) _exit(127);
            std::vector<char*> av;
            for (auto& s : argv) av.push_back(s.data());
            av.push_back(nullptr);
            execv(av[0], av.data());
            std::fprintf(stderr, "%s: error: -c: exec %s: %s\n", kWho, av[0], std::strerror(errno));
            _exit(127);
        }
        ::close(go[0]);
        target = child;
        // Memory arguments other than the strings the kernel copies (and
        // every string under the uprobe PMU fallback) are read from the
        // process when a hit is printed; a command that fires and exits at
        // once would be gone by then. Its main thread is seized with
        // PTRACE_O_TRACEEXIT, so that its exit stops before its memory is
        // released: the last hits are decoded, then it is let go. Nothing
        // else is traced (no syscalls, no other threads); signals it
        // receives are passed on. If trace dies, the kernel detaches and
        // the command runs on. Where ptrace is refused (seccomp, an LSM),
        // tracing goes on without the hold.
        held = ptrace(PTRACE_SEIZE, child, nullptr, reinterpret_cast<void*>(PTRACE_O_TRACEEXIT)) == 0;
    }
    auto abandon_child = [&] {
        if (child > 0) {
            ::close(go[1]);
            waitpid(child, nullptr, 0);
        }
    };

    trace::SessionOptions opt;
    opt.sampling = !a.count;
    opt.buffer_pages = a.buffer_pages;
    opt.tracefs = !a.uprobe_pmu;
    trace::Session session;
    const auto tids = child > 0 ? std::vector<pid_t>{child} : trace::list_threads(target);
    if (!session.attach(target, tids, *plan, opt, error)) {
        abandon_child();
        return fail(error);
    }
    // The printer buffers whole lines itself; stdio's own buffer would
    // split them at 4 KiB boundaries, where a -c command's output sharing
    // our stdout could land inside a line.
    std::setvbuf(stdout, nullptr, _IONBF, 0);
    trace::Printer printer(stdout, a.format == "json" ? trace::Format::Json : trace::Format::Text, *plan, a.string_size);
    const bool interactive = isatty(STDOUT_FILENO);
    // The fallback, stale events deleted: once, on stderr.
    if (!session.note().empty()) {
        const std::string& n = session.note();
        for (size_t pos = 0; pos < n.size();) {
            const size_t eol = std::min(n.find('\n', pos), n.size());
            std::fprintf(stderr, "%s: %s\n", kWho, n.substr(pos, eol - pos).c_str());
            pos = eol + 1;
        }
    }
    // On stderr in every format: scripts wait for this line to know that
    // the probes are attached.
    std::fprintf(stderr, "%s: %zu site%s of %zu probe%s in %s (%zu events); Ctrl-C to stop\n", kWho, plan->sites.size(),
                     plan->sites.size() == 1 ? "" : "s", plan->probes.size(), plan->probes.size() == 1 ? "" : "s",
                     where.c_str(), session.event_count());
    timespec t0{};
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (child > 0) {
        const char c = 1;
        if (::write(go[1], &c, 1) != 1) {}
        ::close(go[1]);
    }

    auto on_hit = [&](const trace::Hit& h) { printer.hit(h); };
    auto on_lost = [&](uint64_t n) { printer.lost(n); };
    trace::Summary summary;
    int status = -1;
    while (summary.ended.empty()) {
        int timeout = 100;
        if (a.duration > 0) {
            const double left = a.duration - seconds_since(t0);
            if (left <= 0) {
                summary.ended = "duration";
                break;
            }
            timeout = std::min(timeout, static_cast<int>(left * 1000) + 1);
        }
        // Again each time: threads come (a ring more) and go (its ring closed).
        std::vector<pollfd> fds = session.poll_fds();
        fds.push_back({sfd, POLLIN, 0});
        if (::poll(fds.data(), fds.size(), timeout) < 0 && errno != EINTR) break;
        session.drain(on_hit, on_lost);
        if (!session.follow_new_threads(error)) {
            std::fprintf(stderr, "%s: warning: %s\n", kWho, error.c_str());
            error.clear();
        }
        if (interactive) printer.flush();
        signalfd_siginfo si;
        while (::read(sfd, &si, sizeof si) == sizeof si)
            if (si.ssi_signo != SIGCHLD) summary.ended = "signal";
        if (child > 0) {
            int ws = 0;
            while (summary.ended.empty() && waitpid(child, &ws, WNOHANG | __WALL) == child) {
                if (WIFEXITED(ws) || WIFSIGNALED(ws)) {
                    status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
                    summary.ended = "command exited";
                } else if (WIFSTOPPED(ws) && (ws >> 8) == (SIGTRAP | (PTRACE_EVENT_EXIT << 8))) {
                    session.drain(on_hit, on_lost);  // its memory is still there
                    printer.flush();
                    ptrace(PTRACE_DETACH, child, nullptr, nullptr);
                    held = false;
                } else if (WIFSTOPPED(ws) && (ws >> 16) == PTRACE_EVENT_STOP) {
                    ptrace(PTRACE_LISTEN, child, nullptr, nullptr);  // a group stop (SIGSTOP): stays stopped
                } else if (WIFSTOPPED(ws)) {
                    ptrace(PTRACE_CONT, child, nullptr, reinterpret_cast<void*>(static_cast<long>(WSTOPSIG(ws))));
                }
            }
        } else if (!alive(target)) {
            summary.ended = "process exited";
        }
    }
    // The site events close first, sampling to the last moment: the gates
    // close with them, and every hit before is still in the rings.
    const std::vector<uint64_t> counts = session.stop();
    session.drain(on_hit, on_lost);
    if (held) ptrace(PTRACE_DETACH, child, nullptr, nullptr);
    if (!a.count) {
        // The kernel reports lost samples (PERF_RECORD_LOST) only once the
        // buffer has room again, so a loss at the very end would never be
        // told. Each event also counts every hit, sampled or not: what the
        // counts hold beyond what was seen and reported is lost too.
        uint64_t fired = 0;
        for (uint64_t n : counts) fired += n;
        const uint64_t known = printer.totals().hits + printer.totals().lost;
        if (fired > known) printer.lost(fired - known);
    }
    session.close();
    if (child > 0 && status < 0) {
        // Stopped by a signal or --duration: the command keeps running, as
        // it would under bpftrace -c; it is ours, so it is waited for only
        // once it ends, which we do not wait for here.
        std::fprintf(stderr, "%s: the command (PID %d) is left running\n", kWho, static_cast<int>(child));
    }
    summary.hits = printer.totals().hits;
    summary.lost = printer.totals().lost;
    summary.seconds = seconds_since(t0);
    summary.command_status = status;
    if (a.count) printer.counts(counts, summary);
    else printer.summary(summary, stderr);
    return 0;
}

}  // namespace

Command add_trace(CLI::App& app) {
    auto a = std::make_shared<TraceArgs>();
    auto* cmd = app.add_subcommand("trace", "Print the hits of probes in a running process or a command, with their arguments");
    auto* p = cmd->add_option("-p,--pid", a->pid, "Process to trace (all its threads, its executable and libraries)");
    auto* c = cmd->add_option("-c,--command", a->command, "Start CMD ARGS, trace it from its first instruction, stop when it exits");
    p->excludes(c);
    cmd->add_option("probes", a->globs, "'provider:name' globs (a name alone matches in any provider; default: all)");
    cmd->add_option("--format", a->format, "Output: text lines or JSON lines")
        ->check(CLI::IsMember({"text", "json"}))
        ->default_str("text");
    cmd->add_flag("--count", a->count, "Count hits per probe and print a table at the end instead of each hit");
    cmd->add_option("--duration", a->duration, "Stop after this many seconds")->check(CLI::PositiveNumber);
    cmd->add_option("--buffer-pages", a->buffer_pages,
                    "Ring buffer pages per thread, a power of two (default 256, 1 MiB, for up to 16 threads; "
                    "fewer beyond, 16 MiB in all)")
        ->each([a](const std::string&) { a->buffer_pages_given = true; });
    cmd->add_flag("--uprobe-pmu", a->uprobe_pmu,
                  "Attach through the uprobe PMU, as without tracefs (strings read when printed, not at the hit)");
    cmd->add_option("--string-size", a->string_size,
                    "Longest string argument printed, in bytes (default 256; the kernel copies at most 4095)")
        ->check(CLI::Range(size_t{1}, size_t{1} << 20));
    cmd->footer(
        "Each hit prints `SECONDS TID provider:name arg=value ...` (CLOCK_MONOTONIC; names and types\n"
        "from .note.probekit, else arg0=...); --format json prints one object per line, of type\n"
        "hit, lost or summary. Hits the ring buffer had no room for are reported (LOST lines and the\n"
        "summary), never hidden. Gated probes are opened while trace runs (uprobes with\n"
        "ref_ctr_offset) and closed by the kernel when it ends, however it ends (even SIGKILL).\n"
        "Each site is a tracefs uprobe event (group probekit_<PID of trace>, mounting tracefs if\n"
        "needed) whose string arguments the kernel copies at the hit; trace deletes the group when\n"
        "it ends. A trace killed with SIGKILL leaves its group in uprobe_events (harmless: no\n"
        "breakpoint, no gate held); the next trace deletes it. Without tracefs (not root), trace\n"
        "falls back to the uprobe PMU, says so, and reads strings when it prints the hit.\n"
        "Ends on Ctrl-C/SIGTERM, --duration, or when the process or command exits; the summary\n"
        "goes to stderr (text) or is the last line (json). With -c the command's exit status is\n"
        "reported; a command still running when trace stops is left running.\n"
        "Exit status: 0 traced (whatever ended it), 1 error (no permission, no such process, no\n"
        "probes in the binary, nothing matches, attach failed), 2 usage error.");
    return {cmd, [a] { return run_trace(*a); }};
}

}  // namespace probekit::cli
