#include "control/uprobe_hold.h"

#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

namespace probekit::control {
namespace {

constexpr const char* kPmuDir = "/sys/bus/event_source/devices/uprobe";

// The uprobe PMU's dynamic type number, or -1.
int pmu_type() {
    std::ifstream f(std::string(kPmuDir) + "/type");
    int type = -1;
    f >> type;
    return f ? type : -1;
}

// Where ref_ctr_offset goes in perf_event_attr::config ("config:32-63").
int ref_ctr_shift() {
    std::ifstream f(std::string(kPmuDir) + "/format/ref_ctr_offset");
    std::string spec;
    f >> spec;
    const auto colon = spec.find(':');
    if (spec.rfind("config:", 0) != 0 || colon == std::string::npos) return -1;
    return std::atoi(spec.c_str() + colon + 1);
}

}  // namespace

bool kernel_gates_available(std::string& why) {
    if (pmu_type() < 0) {
        why = std::string("no uprobe PMU (") + kPmuDir + "/type): the kernel lacks CONFIG_UPROBE_EVENTS";
        return false;
    }
    if (ref_ctr_shift() < 0) {
        why = "the uprobe PMU has no ref_ctr_offset (Linux 4.20 or later is needed)";
        return false;
    }
    return true;
}

bool fill_uprobe_attr(perf_event_attr& attr, const std::string& path, uint64_t offset, uint64_t ref_ctr_offset,
                      std::string& why) {
    // Read once: the PMU's type and format do not change while we run.
    static const int type = pmu_type(), shift = ref_ctr_shift();
    if (type < 0 || shift < 0) {
        kernel_gates_available(why);
        return false;
    }
    attr.size = sizeof attr;
    attr.type = static_cast<uint32_t>(type);
    attr.config = ref_ctr_offset << shift;
    attr.config1 = reinterpret_cast<uint64_t>(path.c_str());  // uprobe_path
    attr.config2 = offset;                                    // probe_offset
    return true;
}

std::string uprobe_open_error(int err) {
    std::string e = std::strerror(err);
    if (err == EACCES || err == EPERM)
        e += " (uprobes need root, or CAP_PERFMON with CAP_SYS_ADMIN on older kernels)";
    return e;
}

UprobeHold& UprobeHold::operator=(UprobeHold&& o) noexcept {
    if (this != &o) {
        release();
        fd_ = o.fd_;
        o.fd_ = -1;
    }
    return *this;
}

UprobeHold::~UprobeHold() { release(); }

void UprobeHold::release() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
}

bool UprobeHold::open(pid_t pid, const Gate& gate, std::string& error) {
    perf_event_attr attr{};
    if (!fill_uprobe_attr(attr, gate.open_path, gate.site_offset, gate.file_offset, error)) return false;
    // Counting only: the hold is the point, hits are not read.
    attr.disabled = 0;
    const long fd = syscall(SYS_perf_event_open, &attr, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0) {
        const int err = errno;
        error = gate.provider + ":" + gate.name + ": perf_event_open (uprobe on " + gate.open_path + "): " +
                uprobe_open_error(err);
        if (err == EACCES || err == EPERM) error += "; use --mode memory with CAP_SYS_PTRACE otherwise";
        return false;
    }
    release();
    fd_ = static_cast<int>(fd);
    return true;
}

}  // namespace probekit::control
