// `probekit enable` and `probekit disable`: open and close the gates of
// gated probes in a running process (src/control/).
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <memory>
#include <sstream>

#include "control/gates.h"
#include "control/uprobe_hold.h"
#include "elf/process.h"
#include "spec/names.h"
#include "spec/probe_glob.h"
#include "tools/probekit/commands.h"
#include "util/json_writer.h"
#include "util/out_buffer.h"

namespace probekit::cli {
namespace {

using control::Gate;

struct GateArgs {
    pid_t pid = 0;
    std::string mode = "auto";
    double duration = 0;
    std::string format = "text";
    std::vector<std::string> globs;
};

// Where `enable --mode memory` records what it opened, so that `disable`
// closes exactly that. Keyed by the process's start time as well as its
// PID, so a recycled PID never inherits another process's record.
std::string state_path(pid_t pid, std::string& error) {
    std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
    std::string stat;
    std::getline(f, stat);
    const auto close = stat.rfind(')');
    if (!f || close == std::string::npos) {
        error = "no process " + std::to_string(pid);
        return "";
    }
    std::istringstream rest(stat.substr(close + 2));
    std::string field;
    for (int i = 3; i <= 22 && rest >> field; ++i) {}  // field 22: starttime
    const char* dir = std::getenv("PROBEKIT_STATE_DIR");
    return std::string(dir && *dir ? dir : "/run/probekit") + "/gates-" + std::to_string(pid) + "-" + field;
}

std::string hex(uint64_t v) {
    char b[24];
    std::snprintf(b, sizeof b, "0x%" PRIx64, v);
    return b;
}

struct Change {
    const Gate* gate;
    uint16_t before, after;
};

void report(const GateArgs& a, const char* verb, const char* mode, const char* how, const std::vector<Change>& changes) {
    util::OutBuffer out(stdout);
    if (a.format == "json") {
        util::JsonWriter j(out);
        j.begin_object().key("pid").value(static_cast<int64_t>(a.pid)).key("action").value(verb).key("mode").value(mode);
        j.key("gates").begin_array();
        for (const auto& c : changes) {
            j.begin_object()
                .key("provider").value(c.gate->provider)
                .key("name").value(c.gate->name)
                .key("object").value(c.gate->object)
                .key("address").value(hex(c.gate->address))
                .key("external_before").value(static_cast<int64_t>(c.before))
                .key("external_after").value(static_cast<int64_t>(c.after))
                .end_object();
        }
        j.end_array().end_object();
        out.put('\n');
        return;
    }
    char line[512];
    std::snprintf(line, sizeof line, "%s %zu probe%s in process %d (%s):\n", verb, changes.size(),
                  changes.size() == 1 ? "" : "s", static_cast<int>(a.pid), how);
    out.append(line);
    for (const auto& c : changes) {
        std::snprintf(line, sizeof line, "  %s:%s  gate %s in %s: external %u -> %u\n", c.gate->provider.c_str(),
                      spec::display_name(c.gate->name).c_str(), hex(c.gate->address).c_str(), c.gate->object.c_str(),
                      c.before, c.after);
        out.append(line);
    }
}

// The SDT half of a gate as it is now (0 when it cannot be read: the report
// only shows it, the kernel did the change).
uint16_t external_now(const elf::ProcessMemory& mem, const Gate& g) {
    std::string e;
    uint16_t v = 0;
    mem.read(g.address, &v, sizeof v, e);
    return v;
}

std::optional<std::vector<Gate>> gates_for(const GateArgs& a, const char* cmd) {
    std::string error;
    auto gates = control::find_gates(a.pid, a.globs, error);
    if (!gates) {
        std::fprintf(stderr, "probekit %s: error: %s\n", cmd, error.c_str());
        return std::nullopt;
    }
    if (gates->empty()) {
        std::string what;
        for (const auto& g : a.globs) what += (what.empty() ? "'" : ", '") + g + "'";
        std::fprintf(stderr, "probekit %s: error: no gated probe%s in process %d\n", cmd,
                     what.empty() ? "" : (" matches " + what).c_str(), static_cast<int>(a.pid));
        return std::nullopt;
    }
    return gates;
}

// Kernel mode: hold a uprobe per gate until a signal, --duration, or the
// target's exit.
int hold(const GateArgs& a, const std::vector<Gate>& gates) {
    sigset_t stop;
    sigemptyset(&stop);
    for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&stop, s);
    sigprocmask(SIG_BLOCK, &stop, nullptr);  // taken with sigtimedwait below, so release always runs
    std::vector<control::UprobeHold> holds(gates.size());
    std::vector<Change> changes;
    elf::ProcessMemory mem;
    std::string unreadable;
    mem.open(a.pid, unreadable);
    for (size_t i = 0; i < gates.size(); ++i) {
        const uint16_t before = external_now(mem, gates[i]);
        std::string error;
        if (!holds[i].open(a.pid, gates[i], error)) {
            std::fprintf(stderr, "probekit enable: error: %s\n", error.c_str());
            return 1;  // the holds taken so far close with `holds`
        }
        changes.push_back({&gates[i], before, external_now(mem, gates[i])});
    }
    report(a, "enabled", "kernel", "kernel uprobes, held until this command ends", changes);
    std::fflush(stdout);
    const timespec tick{0, 200 * 1000 * 1000};
    timespec start{};
    clock_gettime(CLOCK_MONOTONIC, &start);
    const char* why = nullptr;
    while (!why) {
        siginfo_t info;
        if (sigtimedwait(&stop, &info, &tick) > 0) why = "signal";
        else if (::kill(a.pid, 0) != 0 && errno == ESRCH) why = "process exited";
        else if (a.duration > 0) {
            timespec now{};
            clock_gettime(CLOCK_MONOTONIC, &now);
            if (now.tv_sec - start.tv_sec + (now.tv_nsec - start.tv_nsec) / 1e9 >= a.duration) why = "duration";
        }
    }
    holds.clear();
    if (a.format == "text") std::printf("released %zu probe%s (%s)\n", gates.size(), gates.size() == 1 ? "" : "s", why);
    return 0;
}

// Memory mode: +1 on each gate's semaphore, recorded for `disable`.
int open_in_memory(const GateArgs& a, const std::vector<Gate>& gates) {
    std::string error;
    const std::string state = state_path(a.pid, error);
    if (state.empty()) {
        std::fprintf(stderr, "probekit enable: error: %s\n", error.c_str());
        return 1;
    }
    std::vector<Change> changes;
    for (const auto& g : gates) {
        uint16_t before = 0;
        if (!control::adjust_semaphore(a.pid, g, +1, before, error)) {
            std::fprintf(stderr, "probekit enable: error: %s\n", error.c_str());
            for (const auto& c : changes) control::adjust_semaphore(a.pid, *c.gate, -1, before, error);  // undo
            return 1;
        }
        changes.push_back({&g, before, static_cast<uint16_t>(before + 1)});
    }
    ::mkdir(state.substr(0, state.rfind('/')).c_str(), 0700);
    std::ofstream rec(state, std::ios::app);
    for (const auto& g : gates)
        rec << hex(g.address) << '\t' << g.provider << '\t' << g.name << '\t' << g.build_id << '\t' << g.object << '\n';
    if (!rec) {
        std::fprintf(stderr, "probekit enable: warning: could not record the change in %s; `disable` will not find it\n",
                     state.c_str());
    }
    report(a, "enabled", "memory", "semaphores written, open until `probekit disable`", changes);
    return 0;
}

int run_enable(const GateArgs& a) {
    auto gates = gates_for(a, "enable");
    if (!gates) return 1;
    std::string why;
    const bool kernel = a.mode == "kernel" || (a.mode == "auto" && control::kernel_gates_available(why));
    if (a.mode == "kernel" && !control::kernel_gates_available(why)) {
        std::fprintf(stderr, "probekit enable: error: %s; use --mode memory\n", why.c_str());
        return 1;
    }
    return kernel ? hold(a, *gates) : open_in_memory(a, *gates);
}

int run_disable(const GateArgs& a) {
    std::string error;
    const std::string state = state_path(a.pid, error);
    if (state.empty()) {
        std::fprintf(stderr, "probekit disable: error: %s\n", error.c_str());
        return 1;
    }
    std::ifstream in(state);
    if (!in) {
        std::fprintf(stderr,
                     "probekit disable: error: nothing to close: `probekit enable --mode memory` opened no gate in process %d "
                     "(kernel-mode gates close when their `probekit enable` ends)\n",
                     static_cast<int>(a.pid));
        return 1;
    }
    // Each recorded gate must still be the same word of the same file.
    auto live = control::find_gates(a.pid, {}, error);
    if (!live) {
        std::fprintf(stderr, "probekit disable: error: %s\n", error.c_str());
        return 1;
    }
    std::vector<Change> changes;
    std::vector<std::string> kept;
    int status = 0;
    for (std::string line; std::getline(in, line);) {
        std::istringstream f(line);
        std::string addr, provider, name, build_id, object;
        std::getline(f, addr, '\t');
        std::getline(f, provider, '\t');
        std::getline(f, name, '\t');
        std::getline(f, build_id, '\t');
        std::getline(f, object);
        if (!spec::matches_probe_glob(a.globs, provider, name)) {
            kept.push_back(line);
            continue;
        }
        const Gate* g = nullptr;
        for (const auto& x : *live)
            if (hex(x.address) == addr && x.object == object && x.build_id == build_id) g = &x;
        uint16_t before = 0;
        if (!g) {
            std::fprintf(stderr, "probekit disable: warning: %s:%s at %s in %s is no longer mapped; forgotten\n",
                         provider.c_str(), name.c_str(), addr.c_str(), object.c_str());
        } else if (!control::adjust_semaphore(a.pid, *g, -1, before, error)) {
            std::fprintf(stderr, "probekit disable: error: %s\n", error.c_str());
            status = 1;
        } else {
            changes.push_back({g, before, static_cast<uint16_t>(before - 1)});
        }
    }
    in.close();
    if (kept.empty()) {
        ::unlink(state.c_str());
    } else {
        std::ofstream out(state, std::ios::trunc);
        for (const auto& l : kept) out << l << '\n';
    }
    if (changes.empty() && status == 0) {
        std::fprintf(stderr, "probekit disable: error: no gate opened by `probekit enable` matches in process %d\n",
                     static_cast<int>(a.pid));
        return 1;
    }
    report(a, "disabled", "memory", "semaphores written", changes);
    return status;
}

void add_common(CLI::App* cmd, GateArgs& a) {
    cmd->add_option("-p,--pid", a.pid, "Process whose probes to change")->required();
    cmd->add_option("probes", a.globs, "'provider:name' globs (a name alone matches in any provider; default: all)");
    cmd->add_option("--format", a.format, "Report format")->check(CLI::IsMember({"text", "json"}))->default_str("text");
}

}  // namespace

Command add_enable(CLI::App& app) {
    auto a = std::make_shared<GateArgs>();
    auto* cmd = app.add_subcommand("enable", "Open the gates of gated probes in a running process");
    add_common(cmd, *a);
    cmd->add_option("--mode", a->mode, "How to open them: auto (kernel when available), kernel or memory")
        ->check(CLI::IsMember({"auto", "kernel", "memory"}))
        ->default_str("auto");
    cmd->add_option("--duration", a->duration, "Kernel mode: release after this many seconds (default: until Ctrl-C)");
    cmd->footer(
        "Modes, and what each leaves behind:\n"
        "  kernel  a uprobe with ref_ctr_offset on each probe (perf_event_open; root or CAP_PERFMON).\n"
        "          The kernel counts the gate open while this command runs and closes it when the\n"
        "          command ends for any reason, even SIGKILL: nothing is left behind. Each hit of\n"
        "          the probe also takes the uprobe (a few microseconds).\n"
        "  memory  adds 1 to each probe's semaphore through /proc/PID/mem (CAP_SYS_PTRACE) and exits;\n"
        "          the gates stay open, at no cost per hit, until `probekit disable -p PID` takes\n"
        "          back exactly what was added (recorded in /run/probekit). If the record is lost,\n"
        "          the gates stay open until the process exits.\n"
        "Only the external half of each gate (the SDT semaphore) is touched; it never wraps or\n"
        "goes below zero, and only words inside a writable mapping of the probe's own file are\n"
        "written. Exit status: 0 on success, 1 on error (no such process, nothing matches, no\n"
        "permission).");
    return {cmd, [a] { return run_enable(*a); }};
}

Command add_disable(CLI::App& app) {
    auto a = std::make_shared<GateArgs>();
    auto* cmd = app.add_subcommand("disable", "Close the gates that `probekit enable --mode memory` opened");
    add_common(cmd, *a);
    cmd->footer(
        "Takes back, gate by gate, what `probekit enable --mode memory` added in this process\n"
        "(after checking that each word still belongs to the same file, by build-id). Kernel-mode\n"
        "gates close by themselves when their `probekit enable` ends.");
    return {cmd, [a] { return run_disable(*a); }};
}

}  // namespace probekit::cli
