// Holding a gate open the kernel's way: a uprobe on the probe's site with
// ref_ctr_offset pointing at its semaphore, through perf_event_open. The
// kernel adds 1 to the semaphore in the target process while the uprobe
// exists and takes it back when the file descriptor closes, whoever closes
// it: a command that is killed (even with SIGKILL) leaves nothing behind.
#pragma once

#include <sys/types.h>

#include <string>

#include "control/gates.h"

namespace probekit::control {

// Whether this kernel has the uprobe PMU with ref_ctr_offset support; if not,
// `why` says what is missing.
bool kernel_gates_available(std::string& why);

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
