// Holding a gate open the kernel's way: a uprobe on the probe's site with
// ref_ctr_offset pointing at its semaphore, through perf_event_open. The
// kernel adds 1 to the semaphore in the target process while the uprobe
// exists and takes it back when the file descriptor closes, whoever closes
// it: a command that is killed (even with SIGKILL) leaves nothing behind.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "control/gates.h"

struct perf_event_attr;

namespace probekit::control {

// Whether this kernel has the uprobe PMU with ref_ctr_offset support; if not,
// `why` says what is missing.
bool kernel_gates_available(std::string& why);

// Fills the PMU part of `attr` for a uprobe on `path` at file offset
// `offset`, bumping the semaphore at file offset `ref_ctr_offset` (0: none).
// `path` must outlive the perf_event_open call. False (with `why`) when the
// kernel has no uprobe PMU or no ref_ctr_offset. Shared by `enable`'s holds
// and `trace`'s sampling events (src/trace/).
bool fill_uprobe_attr(perf_event_attr& attr, const std::string& path, uint64_t offset, uint64_t ref_ctr_offset,
                      std::string& why);

// The message for a failed perf_event_open of a uprobe: names the
// capability that is missing when that is the reason.
std::string uprobe_open_error(int err);

class UprobeHold {
public:
    UprobeHold() = default;
    UprobeHold(UprobeHold&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
    UprobeHold& operator=(UprobeHold&& o) noexcept;
    UprobeHold(const UprobeHold&) = delete;
    UprobeHold& operator=(const UprobeHold&) = delete;
    ~UprobeHold();

    // On failure `error` says why, with the capability that is missing when
    // that is the reason.
    bool open(pid_t pid, const Gate& gate, std::string& error);
    void release();

private:
    int fd_ = -1;
};

}  // namespace probekit::control
