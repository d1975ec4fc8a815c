#include "trace/session.h"

#include <dirent.h>
#include <fcntl.h>
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
#include <utility>

#include "control/uprobe_hold.h"

namespace probekit::trace {
namespace {

void raise_fd_limit() {
    rlimit r{};
    if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max) {
        r.rlim_cur = r.rlim_max;
        setrlimit(RLIMIT_NOFILE, &r);
    }
}

long perf_open(perf_event_attr& attr, pid_t tid, int group, unsigned long flags) {
    return syscall(SYS_perf_event_open, &attr, tid, -1, group, flags | PERF_FLAG_FD_CLOEXEC);
}

}  // namespace

size_t default_buffer_pages(size_t threads) {
    size_t pages = 256;
    while (pages > 16 && pages * std::max<size_t>(threads, 1) > 4096) pages /= 2;
    return pages;
}

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

size_t Session::event_count() const {
    size_t n = 0;
    for (const auto& t : threads_) n += static_cast<size_t>(std::count_if(t.site_fd.begin(), t.site_fd.end(), [](int fd) { return fd >= 0; }));
    return n;
}

void Session::count_and_close(Thread& t) {
    for (size_t si = 0; si < t.site_fd.size(); ++si) {
        if (t.site_fd[si] < 0) continue;
        uint64_t v = 0;
        if (::read(t.site_fd[si], &v, sizeof v) == sizeof v) closed_counts_[plan_->sites[si].probe] += v;
        ::close(t.site_fd[si]);
        t.site_fd[si] = -1;
    }
}

std::vector<uint64_t> Session::stop() {
    for (auto& t : threads_) count_and_close(t);
    for (int& fd : bpf_holder_)
        if (fd >= 0) ::close(std::exchange(fd, -1));
    if (bpf_.active()) {
        // Read after every event is closed: the map holds every hit until
        // the gates closed.
        const std::vector<uint64_t> per_site = bpf_.counts();
        std::vector<uint64_t> out = closed_counts_;
        for (size_t si = 0; si < per_site.size(); ++si) out[plan_->sites[si].probe] += per_site[si];
        return out;
    }
    return closed_counts_;
}

void Session::release(Thread& t) {
    count_and_close(t);
    t.ring.reset();
    if (t.ring_fd >= 0) ::close(std::exchange(t.ring_fd, -1));
}

void Session::close() {
    if (plan_) stop();
    for (auto& t : threads_) release(t);
    threads_.clear();
    // Only now that no perf event uses them.
    kernel_.remove();
}

bool Session::attach(pid_t pid, const std::vector<pid_t>& tids, const TracePlan& plan, const SessionOptions& opt,
                     std::string& error) {
    pid_ = pid;
    plan_ = &plan;
    opt_ = opt;
    if (opt_.buffer_pages == 0) opt_.buffer_pages = default_buffer_pages(tids.size());
    closed_counts_.assign(plan.probes.size(), 0);
    raise_fd_limit();
    std::string why = opt.tracefs ? "" : "--uprobe-pmu";
    if (opt.tracefs) {
        const std::string dir = tracefs_dir(why);
        if (!dir.empty()) {
            std::string warning;
            if (const size_t n = remove_stale_groups(dir, warning))
                note_ = "deleted " + std::to_string(n) + " uprobe event" + (n == 1 ? "" : "s") +
                        " left in tracefs by trace processes that were killed\n";
            if (!warning.empty()) note_ += "warning: " + warning + "\n";
            if (kernel_.define(dir, plan, why)) why.clear();
        }
    }
    if (!why.empty())
        note_ += "not using tracefs uprobe events (" + why +
                 "): falling back to the uprobe PMU; string arguments are read when a hit is printed, "
                 "not at the hit, and every thread's event is a uprobe handler of its own\n";
    if (!opt.sampling && !kernel_.empty()) {
        std::string why;
        if (bpf_.create(plan.sites.size(), why)) bpf_holder_.assign(plan.sites.size(), -1);
        else note_ += "counting with perf events, a little slower per hit than with BPF (" + why + ")\n";
    }
    if (!add_threads(tids, error)) {
        close();
        return false;
    }
    if (threads_.empty()) {
        error = "no thread of process " + std::to_string(pid) + " is left to trace";
        close();
        return false;
    }
    return true;
}

bool Session::follow_new_threads(std::string& error) {
    const std::vector<pid_t> now = list_threads(pid_);
    for (auto& t : threads_)
        if (!std::binary_search(now.begin(), now.end(), t.tid)) t.exited = true;
    std::vector<pid_t> fresh;
    for (pid_t t : now)
        if (!std::binary_search(tried_.begin(), tried_.end(), t)) fresh.push_back(t);
    return fresh.empty() || add_threads(fresh, error);
}

int Session::open_site_event(const Thread& t, size_t si, std::string& error) {
    const TraceSite& site = plan_->sites[si];
    perf_event_attr attr{};
    if (kernel_.empty()) {
        if (!control::fill_uprobe_attr(attr, site.open_path, site.offset, site.ref_ctr, error)) return -1;
    } else {
        attr.size = sizeof attr;
        attr.type = PERF_TYPE_TRACEPOINT;
        attr.config = kernel_.event(si).id;
    }
    // Enabled from the start: the gate opens inside this call, and a
    // disabled event would let the builder run unseen until it is enabled.
    attr.disabled = 0;
    unsigned long flags = 0;
    if (opt_.sampling) {
        attr.sample_period = 1;
        attr.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_REGS_USER;
        attr.sample_regs_user = kRegsMask;
        if (!kernel_.empty() && !kernel_.event(si).string_field.empty()) attr.sample_type |= PERF_SAMPLE_RAW;
        if (site.stack_bytes) {
            attr.sample_type |= PERF_SAMPLE_STACK_USER;
            attr.sample_stack_user = site.stack_bytes;
        }
        attr.use_clockid = 1;
        attr.clockid = CLOCK_MONOTONIC;
        // Into the thread's ring from the first hit: with FD_OUTPUT the
        // kernel redirects the output before it installs the event, where
        // PERF_EVENT_IOC_SET_OUTPUT after the open would drop (and only
        // count) the hits in between.
        flags = PERF_FLAG_FD_OUTPUT | PERF_FLAG_FD_NO_GROUP;
    }
    long fd = perf_open(attr, t.tid, opt_.sampling ? t.ring_fd : -1, flags);
    if (fd < 0 && errno == EINVAL && flags) {
        // A kernel that refuses FD_OUTPUT: redirect after the open.
        fd = perf_open(attr, t.tid, -1, 0);
        if (fd >= 0 && ioctl(static_cast<int>(fd), PERF_EVENT_IOC_SET_OUTPUT, t.ring_fd) != 0) {
            error = std::string("PERF_EVENT_IOC_SET_OUTPUT: ") + std::strerror(errno);
            ::close(static_cast<int>(fd));
            return -1;
        }
    }
    if (fd < 0) {
        const int err = errno;
        if (err == ESRCH) return -2;  // the thread ended meanwhile
        const TraceProbe& probe = plan_->probes[site.probe];
        error = probe.provider + ":" + probe.name + ": perf_event_open (" +
                (kernel_.empty() ? "uprobe on " + site.object : "uprobe event " + std::to_string(kernel_.event(si).id)) +
                "): " + control::uprobe_open_error(err);
        if (err == EMFILE || err == ENFILE)
            error += " (" + std::to_string(event_count()) + " events open: sites x threads; raise ulimit -n)";
        return -1;
    }
    if (opt_.sampling) {
        uint64_t id = 0;
        if (ioctl(static_cast<int>(fd), PERF_EVENT_IOC_ID, &id) != 0) {
            error = std::string("PERF_EVENT_IOC_ID: ") + std::strerror(errno);
            ::close(static_cast<int>(fd));
            return -1;
        }
        site_of_id_[id] = si;
    }
    return static_cast<int>(fd);
}

bool Session::add_threads(const std::vector<pid_t>& tids, std::string& error) {
    const size_t first = threads_.size();
    for (pid_t tid : tids) {
        tried_.insert(std::upper_bound(tried_.begin(), tried_.end(), tid), tid);
        Thread t;
        t.tid = tid;
        t.site_fd.assign(plan_->sites.size(), -1);
        if (opt_.sampling) {
            // The ring's owner: a dummy software event of the same thread,
            // which counts nothing and outlives the site events (stop()).
            perf_event_attr attr{};
            attr.size = sizeof attr;
            attr.type = PERF_TYPE_SOFTWARE;
            attr.config = PERF_COUNT_SW_DUMMY;
            attr.use_clockid = 1;  // the kernel redirects output only between events of one clock
            attr.clockid = CLOCK_MONOTONIC;
            attr.watermark = 1;  // woken when a quarter of the ring is full; the caller also drains on its tick
            attr.wakeup_watermark = static_cast<uint32_t>(opt_.buffer_pages * static_cast<size_t>(sysconf(_SC_PAGESIZE)) / 4);
            const long fd = perf_open(attr, tid, -1, 0);
            if (fd < 0) {
                if (errno == ESRCH) continue;
                error = "perf_event_open (the ring of thread " + std::to_string(tid) + "): " + control::uprobe_open_error(errno);
                return false;
            }
            t.ring_fd = static_cast<int>(fd);
            t.ring = std::make_unique<RingBuffer>();
            if (!t.ring->map(t.ring_fd, opt_.buffer_pages, error)) {
                ::close(t.ring_fd);
                return false;
            }
        }
        threads_.push_back(std::move(t));
    }
    // Site by site across the threads: a site's gate opens in its first open,
    // and its other threads follow within microseconds each.
    for (size_t si = 0; si < plan_->sites.size(); ++si) {
        for (size_t ti = first; ti < threads_.size(); ++ti) {
            Thread& t = threads_[ti];
            if (t.exited) continue;
            const int fd = open_site_event(t, si, error);
            if (fd == -1) return false;
            if (fd == -2) {
                t.exited = true;
                continue;
            }
            t.site_fd[si] = fd;
            // The program goes on one event of the site, held by a dup of
            // its fd so that it stays when that thread exits.
            if (!bpf_holder_.empty() && bpf_holder_[si] < 0) {
                std::string why;
                if (!bpf_.attach(si, fd, why)) {
                    error = plan_->probes[plan_->sites[si].probe].provider + ":" +
                            plan_->probes[plan_->sites[si].probe].name + ": " + why;
                    return false;
                }
                bpf_holder_[si] = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
            }
        }
    }
    return true;
}

std::vector<pollfd> Session::poll_fds() const {
    std::vector<pollfd> out;
    for (const auto& t : threads_)
        if (t.ring) out.push_back({t.ring_fd, POLLIN, 0});
    return out;
}

void Session::drain(const std::function<void(const Hit&)>& on_hit, const std::function<void(uint64_t)>& on_lost) {
    for (auto& t : threads_) {
        if (!t.ring) continue;
        t.ring->drain([&](const perf_event_header& h, std::span<const unsigned char> rec) {
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
            if (!u64(id) || !u64(pid_tid) || !u64(time)) return;
            auto it = site_of_id_.find(id);
            if (it == site_of_id_.end()) return;
            Hit hit;
            hit.site = &plan_->sites[it->second];
            hit.pid = static_cast<uint32_t>(pid_tid);
            hit.tid = static_cast<uint32_t>(pid_tid >> 32);
            hit.time_ns = time;
            hit.ctx.pid = static_cast<pid_t>(hit.pid);
            if (!kernel_.empty()) {
                const KernelEvent& ev = kernel_.event(it->second);
                if (!ev.string_field.empty()) {
                    uint32_t size = 0;
                    if (at + 4 > rec.size()) return;
                    std::memcpy(&size, rec.data() + at, 4);
                    if (at + 4 + size > rec.size()) return;
                    hit.ctx.raw = {rec.data() + at + 4, size};
                    hit.ctx.string_field = ev.string_field;
                    at += 4 + size;  // the kernel pads the size so that this stays 8-aligned
                }
            }
            if (!u64(abi)) return;
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
    // Threads that have exited, once their last records are read.
    for (auto it = threads_.begin(); it != threads_.end();) {
        if (!it->exited) {
            ++it;
            continue;
        }
        release(*it);
        tried_.erase(std::lower_bound(tried_.begin(), tried_.end(), it->tid));  // its tid may come back
        it = threads_.erase(it);
    }
}

}  // namespace probekit::trace
