// The sites of a trace plan as tracefs uprobe events
// (/sys/kernel/tracing/uprobe_events), one per site, in a group named after
// this process (probekit_<pid>). Why tracefs rather than the uprobe PMU
// alone: an event defined there is one uprobe consumer shared by every perf
// event opened on it (PERF_TYPE_TRACEPOINT, its id), where each uprobe PMU
// event is a consumer of its own whose handler runs on every hit; and its
// fetch arguments make the kernel copy string arguments at the hit, into the
// record (PERF_SAMPLE_RAW), where a later read of the process's memory may
// find the string freed.
//
// The definitions outlive the process that wrote them: they are deleted by
// remove() (the destructor), which trace reaches however it ends except
// SIGKILL or a crash; the groups such a trace leaves behind are deleted by
// the next trace that starts (remove_stale_groups).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trace/plan.h"

namespace probekit::trace {

struct KernelEvent {
    uint64_t id = 0;                    // what perf_event_open takes as attr.config
    // Per argument: offset of its __data_loc field in the record, or -1.
    // Empty when the kernel copies no string for this site (no PERF_SAMPLE_RAW).
    std::vector<int32_t> string_field;
};

// The tracefs directory holding uprobe_events, mounting tracefs at
// /sys/kernel/tracing when it is not mounted anywhere. Empty, with `why`,
// when there is none (no CONFIG_UPROBE_EVENTS, mount refused).
std::string tracefs_dir(std::string& why);

// Deletes the probekit_<pid> groups of trace processes that no longer
// exist (and one of this process's PID: call it before define()). Returns
// the number of events deleted; `warning` names any that could not be.
size_t remove_stale_groups(const std::string& dir, std::string& warning);

class UprobeEvents {
public:
    UprobeEvents() = default;
    UprobeEvents(const UprobeEvents&) = delete;
    UprobeEvents& operator=(const UprobeEvents&) = delete;
    ~UprobeEvents() { remove(); }

    // Defines one event per site of `plan` in `dir` (from tracefs_dir), each
    // string argument (kind 8) fetched by the kernel, up to the kernel's
    // limit of 4095 bytes. On failure `why` names the site and the
    // kernel's reason, and nothing stays defined.
    bool define(const std::string& dir, const TracePlan& plan, std::string& why);
    const KernelEvent& event(size_t site) const { return events_[site]; }
    bool empty() const { return defined_ == 0; }
    // Deletes the definitions. The perf events opened on them must be
    // closed first (the kernel refuses to delete an event in use).
    void remove();

private:
    std::string dir_, group_;
    std::vector<KernelEvent> events_;
    size_t defined_ = 0;
};

}  // namespace probekit::trace
