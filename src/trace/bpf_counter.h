// Counting hits (--count) with a BPF program on each site's tracefs uprobe
// event, the way bpftrace counts: the program adds 1 to the site's slot of
// a per-CPU array and returns 0, which ends the kernel's handling of the hit
// there, before it copies the arguments into a record and runs the perf
// event machinery that a plain counting perf event goes through (about 100
// ns more per hit, measured: docs/benchmarks.md section 6).
//
// Hand-written (seven instructions through the bpf() system call) rather
// than with libbpf: nothing here needs BTF, relocations or an object file,
// and the static probekit binary cannot link Debian 12's libbpf.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace probekit::trace {

class BpfCounter {
public:
    BpfCounter() = default;
    BpfCounter(const BpfCounter&) = delete;
    BpfCounter& operator=(const BpfCounter&) = delete;
    ~BpfCounter();

    // A per-CPU array of `sites` counters and one program per site. False
    // with `why` when the kernel refuses (no CONFIG_BPF_EVENTS, no CAP_BPF).
    bool create(size_t sites, std::string& why);
    // Runs site `site`'s program on every hit of the tracepoint perf event
    // `perf_fd` (PERF_EVENT_IOC_SET_BPF). Attach it to one event per site:
    // the program belongs to the site's event, and runs for the hits of
    // every thread our events cover.
    bool attach(size_t site, int perf_fd, std::string& why);
    // The hits counted per site, summed over the CPUs.
    std::vector<uint64_t> counts() const;
    bool active() const { return map_fd_ >= 0; }

private:
    int map_fd_ = -1;
    std::vector<int> prog_fd_;
};

}  // namespace probekit::trace
