#include "trace/session.h"

#include <dirent.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>

#include "control/uprobe_hold.h"

namespace probekit::trace {
namespace {

// The online CPUs ("0-3,6"), from sysfs.
std::vector<int> online_cpus() {
    std::ifstream f("/sys/devices/system/cpu/online");
    std::string text;
    std::getline(f, text);
    std::vector<int> cpus;
    size_t pos = 0;
    while (pos < text.size()) {
        const size_t comma = std::min(text.find(',', pos), text.size());
        const std::string part = text.substr(pos, comma - pos);
        const int lo = std::atoi(part.c_str());
        const auto dash = part.find('-');
        const int hi = dash == std::string::npos ? lo : std::atoi(part.c_str() + dash + 1);
        for (int c = lo; c <= hi; ++c) cpus.push_back(c);
        pos = comma + 1;
    }
    if (cpus.empty())
        for (long c = 0; c < sysconf(_SC_NPROCESSORS_ONLN); ++c) cpus.push_back(static_cast<int>(c));
    return cpus;
}

void raise_fd_limit() {
    rlimit r{};
    if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max) {
        r.rlim_cur = r.rlim_max;
        setrlimit(RLIMIT_NOFILE, &r);
    }
}

long perf_open(perf_event_attr& attr, pid_t tid, int cpu, int group) {
    return syscall(SYS_perf_event_open, &attr, tid, cpu, group, PERF_FLAG_FD_CLOEXEC);
}

}  // namespace

std::vector<pid_t> list_threads(pid_t pid) {
    std::vector<pid_t> out;
    const std::string dir = "/proc/" + std::to_string(pid) + "/task";
    if (DIR* d = opendir(dir.c_str())) {
        while (dirent* e = readdir(d))
            if (e->d_name[0] >= '0' && e->d_name[0] <= '9') out.push_back(std::atoi(e->d_name));
        closedir(d);
    }
    std::sort(out.begin(), out.end());
    return out;
}

Session::~Session() { close(); }

void Session::close() {
    rings_.clear();
    for (const auto& e : events_) ::close(e.fd);
    events_.clear();
}

bool Session::attach(pid_t pid, const std::vector<pid_t>& tids, const TracePlan& plan, const SessionOptions& opt,
                     std::string& error) {
    pid_ = pid;
    plan_ = &plan;
    opt_ = opt;
    raise_fd_limit();
    cpus_ = opt.sampling ? online_cpus() : std::vector<int>{-1};
    ring_fd_.assign(cpus_.size(), -1);
    if (!add_threads(tids, error)) {
        close();
        return false;
    }
    if (events_.empty()) {
        error = "no thread of process " + std::to_string(pid) + " is left to trace";
        return false;
    }
    return true;
}

bool Session::follow_new_threads(std::string& error) {
    std::vector<pid_t> fresh;
    for (pid_t t : list_threads(pid_))
        if (!std::binary_search(tids_.begin(), tids_.end(), t)) fresh.push_back(t);
    return fresh.empty() || add_threads(fresh, error);
}

bool Session::add_threads(const std::vector<pid_t>& tids, std::string& error) {
    const TracePlan& plan = *plan_;
    for (pid_t tid : tids) {
        bool gone = false;
        for (size_t si = 0; si < plan.sites.size() && !gone; ++si) {
            const TraceSite& site = plan.sites[si];
            for (size_t ci = 0; ci < cpus_.size() && !gone; ++ci) {
                perf_event_attr attr{};
                if (!control::fill_uprobe_attr(attr, site.open_path, site.offset, site.ref_ctr, error)) return false;
                // Enabled from the start: registering the uprobe opens the
                // gate at once, and registering takes milliseconds per event;
                // a disabled event would let the builder run unseen all that
                // time. A hit in the microseconds before this event's output
                // is redirected to its CPU's ring is counted, not sampled,
                // and so reported as lost at the end.
                attr.disabled = 0;
                if (opt_.sampling) {
                    attr.sample_period = 1;
                    attr.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_REGS_USER;
                    attr.sample_regs_user = kRegsMask;
                    if (site.stack_bytes) {
                        attr.sample_type |= PERF_SAMPLE_STACK_USER;
                        attr.sample_stack_user = site.stack_bytes;
                    }
                    attr.use_clockid = 1;
                    attr.clockid = CLOCK_MONOTONIC;
                    // Woken when a quarter of the buffer is full; the caller
                    // also drains on its own tick, so a trickle of hits
                    // prints within one tick.
                    attr.watermark = 1;
                    attr.wakeup_watermark =
                        static_cast<uint32_t>(opt_.buffer_pages * static_cast<size_t>(sysconf(_SC_PAGESIZE)) / 4);
                }
                const long fd = perf_open(attr, tid, cpus_[ci], -1);
                if (fd < 0) {
                    const int err = errno;
                    if (err == ESRCH) {  // the thread ended meanwhile
                        gone = true;
                        break;
                    }
                    error = plan.probes[site.probe].provider + ":" + plan.probes[site.probe].name +
                            ": perf_event_open (uprobe on " + site.object + "): " + control::uprobe_open_error(err);
                    if (err == EMFILE || err == ENFILE)
                        error += " (" + std::to_string(events_.size()) + " events open: sites x threads x CPUs; raise ulimit -n)";
                    return false;
                }
                events_.push_back({static_cast<int>(fd), si});
                if (!opt_.sampling) continue;
                uint64_t id = 0;
                if (ioctl(static_cast<int>(fd), PERF_EVENT_IOC_ID, &id) != 0) {
                    error = std::string("PERF_EVENT_IOC_ID: ") + std::strerror(errno);
                    return false;
                }
                site_of_id_[id] = si;
                if (ring_fd_[ci] < 0) {
                    RingBuffer rb;
                    if (!rb.map(static_cast<int>(fd), opt_.buffer_pages, error)) return false;
                    ring_fd_[ci] = static_cast<int>(fd);
                    rings_.push_back(std::move(rb));
                } else if (ioctl(static_cast<int>(fd), PERF_EVENT_IOC_SET_OUTPUT, ring_fd_[ci]) != 0) {
                    error = std::string("PERF_EVENT_IOC_SET_OUTPUT: ") + std::strerror(errno);
                    return false;
                }
            }
        }
        // Gone threads are remembered too, so that they are not tried again.
        tids_.insert(std::upper_bound(tids_.begin(), tids_.end(), tid), tid);
    }
    return true;
}

void Session::disable() {
    for (const auto& e : events_) ioctl(e.fd, PERF_EVENT_IOC_DISABLE, 0);
}

std::vector<pollfd> Session::poll_fds() const {
    std::vector<pollfd> out;
    for (const auto& r : rings_) out.push_back({r.fd(), POLLIN, 0});
    return out;
}

void Session::drain(const std::function<void(const Hit&)>& on_hit, const std::function<void(uint64_t)>& on_lost) {
    for (auto& ring : rings_) {
        ring.drain([&](const perf_event_header& h, std::span<const unsigned char> rec) {
            // Fields in the order of perf_event.h for our sample_type.
            size_t at = sizeof h;
            auto u64 = [&](uint64_t& v) {
                if (at + 8 > rec.size()) return false;
                std::memcpy(&v, rec.data() + at, 8);
                at += 8;
                return true;
            };
            if (h.type == PERF_RECORD_LOST) {
                uint64_t id = 0, lost = 0;
                if (u64(id) && u64(lost)) on_lost(lost);
                return;
            }
            if (h.type != PERF_RECORD_SAMPLE) return;
            uint64_t id = 0, pid_tid = 0, time = 0, abi = 0;
            if (!u64(id) || !u64(pid_tid) || !u64(time) || !u64(abi)) return;
            auto it = site_of_id_.find(id);
            if (it == site_of_id_.end()) return;
            Hit hit;
            hit.site = &plan_->sites[it->second];
            hit.pid = static_cast<uint32_t>(pid_tid);
            hit.tid = static_cast<uint32_t>(pid_tid >> 32);
            hit.time_ns = time;
            hit.ctx.pid = static_cast<pid_t>(hit.pid);
            if (abi != PERF_SAMPLE_REGS_ABI_NONE) {
                if (at + kRegsCount * 8 > rec.size()) return;
                // Records are 8-byte aligned in the ring and in scratch.
                hit.ctx.regs = {reinterpret_cast<const uint64_t*>(rec.data() + at), kRegsCount};
                at += kRegsCount * 8;
            }
            if (hit.site->stack_bytes) {
                uint64_t size = 0;
                if (!u64(size) || at + size + 8 > rec.size()) return;
                uint64_t dyn = 0;
                std::memcpy(&dyn, rec.data() + at + size, 8);
                hit.ctx.stack = {rec.data() + at, static_cast<size_t>(std::min(size, dyn))};
            }
            on_hit(hit);
        });
    }
}

std::vector<uint64_t> Session::counts() const {
    std::vector<uint64_t> out(plan_ ? plan_->probes.size() : 0, 0);
    for (const auto& e : events_) {
        uint64_t v = 0;
        if (::read(e.fd, &v, sizeof v) == sizeof v) out[plan_->sites[e.site].probe] += v;
    }
    return out;
}

}  // namespace probekit::trace
