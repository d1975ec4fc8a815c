#include "trace/uprobe_events.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "trace/event_format.h"
#include "trace/fetch_arg.h"
#include "util/file.h"

namespace probekit::trace {
namespace {

constexpr const char* kGroupPrefix = "probekit_";

// One command to uprobe_events: 0, or the errno with `why`. O_APPEND:
// without it the open truncates, which deletes every uprobe event on the
// machine (bpftrace's, perf's).
int command(const std::string& dir, const std::string& line, std::string& why) {
    const int fd = ::open((dir + "/uprobe_events").c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0) {
        const int err = errno;
        why = dir + "/uprobe_events: " + std::strerror(err);
        return err;
    }
    const bool ok = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
    const int err = errno;
    ::close(fd);
    if (ok) return 0;
    why = std::strerror(err);
    // The kernel explains a rejected definition in error_log; its last
    // "error:" line is the one for this command.
    std::ifstream log(dir + "/error_log");
    std::string l, last;
    while (std::getline(log, l))
        if (auto at = l.find("error: "); at != std::string::npos) last = l.substr(at + 7);
    if (!last.empty()) why += " (" + last + ")";
    return err;
}

// A tracefs or procfs file, empty when it cannot be read.
std::string read_text(const std::string& path) {
    std::string error;
    return util::read_file(path, error).value_or("");
}

// Whether `pid` is a running probekit (not a reused PID).
bool probekit_alive(long pid) {
    std::string comm = read_text("/proc/" + std::to_string(pid) + "/comm");
    while (!comm.empty() && comm.back() == '\n') comm.pop_back();
    return comm == "probekit";
}

}  // namespace

std::string tracefs_dir(std::string& why) {
    for (const char* d : {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"})
        if (::access((std::string(d) + "/uprobe_events").c_str(), F_OK) == 0) return d;
    // Not mounted (a fresh boot, a container): mount it where the kernel
    // documents it, as perf and bpftrace expect.
    if (::mount("nodev", "/sys/kernel/tracing", "tracefs", 0, nullptr) != 0) {
        why = std::string("tracefs is not mounted and mounting it at /sys/kernel/tracing failed: ") + std::strerror(errno);
        return {};
    }
    if (::access("/sys/kernel/tracing/uprobe_events", F_OK) != 0) {
        why = "tracefs has no uprobe_events (kernel without CONFIG_UPROBE_EVENTS)";
        return {};
    }
    return "/sys/kernel/tracing";
}

size_t remove_stale_groups(const std::string& dir, std::string& warning) {
    // Lines such as "p:probekit_123/s0 /usr/bin/server:0x0000000000001139(0x4010) s1=+0(%di):string".
    std::istringstream in(read_text(dir + "/uprobe_events"));
    std::string line;
    size_t removed = 0;
    while (std::getline(in, line)) {
        const size_t colon = line.find(':'), slash = line.find('/'), space = line.find(' ');
        if (colon == std::string::npos || slash == std::string::npos || slash > space) continue;
        const std::string group = line.substr(colon + 1, slash - colon - 1);
        if (!group.starts_with(kGroupPrefix)) continue;
        char* end = nullptr;
        const long pid = std::strtol(group.c_str() + std::strlen(kGroupPrefix), &end, 10);
        // Our own PID's group is stale too (a killed trace's, whose PID we
        // got again): we have defined nothing yet.
        if (*end || pid <= 0 || (pid != getpid() && probekit_alive(pid))) continue;
        std::string why;
        const int err = command(dir, "-:" + line.substr(colon + 1, space - colon - 1) + "\n", why);
        if (err == 0) ++removed;
        else if (err != ENOENT)  // ENOENT: another trace starting deleted it first
            warning = "cannot delete the stale uprobe event " + line.substr(colon + 1, space - colon - 1) + ": " + why;
    }
    return removed;
}

bool UprobeEvents::define(const std::string& dir, const TracePlan& plan, std::string& why) {
    dir_ = dir;
    group_ = kGroupPrefix + std::to_string(getpid());
    events_.assign(plan.sites.size(), {});
    for (size_t si = 0; si < plan.sites.size(); ++si) {
        const TraceSite& site = plan.sites[si];
        const TraceProbe& probe = plan.probes[site.probe];
        const std::string name = "s" + std::to_string(si);
        // The kernel splits the definition at blanks.
        if (site.open_path.find_first_of(" \t\n") != std::string::npos) {
            why = site.object + ": a path with blanks cannot be given to uprobe_events";
            remove();
            return false;
        }
        char place[64];
        std::snprintf(place, sizeof place, ":0x%llx", static_cast<unsigned long long>(site.offset));
        std::string def = "p:" + group_ + "/" + name + " " + site.open_path + place;
        if (site.ref_ctr) {
            std::snprintf(place, sizeof place, "(0x%llx)", static_cast<unsigned long long>(site.ref_ctr));
            def += place;
        }
        for (size_t ai = 0; ai < site.args.size(); ++ai)
            if (site.args[ai].kind == 8)
                if (auto fetch = string_fetch_arg(site.args[ai].spec)) def += " a" + std::to_string(ai) + "=" + *fetch;
        if (command(dir, def + "\n", why) != 0) {
            why = probe.provider + ":" + probe.name + ": defining uprobe event `" + def + "`: " + why;
            remove();
            return false;
        }
        ++defined_;
        const std::string evdir = dir + "/events/" + group_ + "/" + name;
        KernelEvent& ev = events_[si];
        ev.id = std::strtoull(read_text(evdir + "/id").c_str(), nullptr, 10);
        std::string err;
        auto fields = parse_event_format(read_text(evdir + "/format"), err);
        if (ev.id == 0 || !fields) {
            why = evdir + ": unreadable id or format" + (err.empty() ? "" : ": " + err);
            remove();
            return false;
        }
        ev.string_field.assign(site.args.size(), -1);
        for (const auto& f : *fields)
            if (f.data_loc && f.name.size() > 1 && f.name[0] == 'a') {
                const size_t ai = std::strtoul(f.name.c_str() + 1, nullptr, 10);
                if (ai < site.args.size()) ev.string_field[ai] = static_cast<int32_t>(f.offset);
            }
        if (std::none_of(ev.string_field.begin(), ev.string_field.end(), [](int32_t f) { return f >= 0; }))
            ev.string_field.clear();
    }
    return true;
}

void UprobeEvents::remove() {
    for (size_t si = 0; si < defined_; ++si) {
        std::string why;
        const std::string del = "-:" + group_ + "/s" + std::to_string(si) + "\n";
        // The kernel frees a perf event's hold on its trace event a moment
        // after the close (RCU): a busy event is tried again briefly.
        for (int attempt = 0; attempt < 50 && command(dir_, del, why) == EBUSY; ++attempt) ::usleep(2000);
    }
    defined_ = 0;
}

}  // namespace probekit::trace
