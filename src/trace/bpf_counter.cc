#include "trace/bpf_counter.h"

#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "util/file.h"

namespace probekit::trace {
namespace {

long bpf(int cmd, bpf_attr& attr) { return syscall(SYS_bpf, cmd, &attr, sizeof attr); }

bpf_insn insn(uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm) {
    bpf_insn i{};
    i.code = code;
    i.dst_reg = dst & 0xf;
    i.src_reg = src & 0xf;
    i.off = off;
    i.imm = imm;
    return i;
}

// The CPUs the kernel may have ("0-3"): a per-CPU map's value has a slot for each.
size_t possible_cpus() {
    std::string error;
    const std::string text = util::read_file("/sys/devices/system/cpu/possible", error).value_or("");
    const size_t dash = text.rfind('-'), comma = text.rfind(',');
    const size_t at = dash == std::string::npos ? (comma == std::string::npos ? 0 : comma + 1) : dash + 1;
    const long last = std::atol(text.c_str() + at);
    return text.empty() ? static_cast<size_t>(sysconf(_SC_NPROCESSORS_CONF)) : static_cast<size_t>(last) + 1;
}

}  // namespace

BpfCounter::~BpfCounter() {
    for (int fd : prog_fd_) ::close(fd);
    if (map_fd_ >= 0) ::close(map_fd_);
}

bool BpfCounter::create(size_t sites, std::string& why) {
    bpf_attr m{};
    m.map_type = BPF_MAP_TYPE_PERCPU_ARRAY;
    m.key_size = 4;
    m.value_size = 8;
    m.max_entries = static_cast<uint32_t>(sites);
    const long map = bpf(BPF_MAP_CREATE, m);
    if (map < 0) {
        why = std::string("bpf(BPF_MAP_CREATE): ") + std::strerror(errno);
        return false;
    }
    map_fd_ = static_cast<int>(map);
    for (size_t si = 0; si < sites; ++si) {
        // key = si; v = map_lookup(&map, &key); if (v) atomic *v += 1; return 0;
        const bpf_insn prog[] = {
            insn(BPF_ST | BPF_MEM | BPF_W, BPF_REG_10, 0, -4, static_cast<int32_t>(si)),
            insn(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_10, 0, 0),
            insn(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, -4),
            insn(BPF_LD | BPF_DW | BPF_IMM, BPF_REG_1, BPF_PSEUDO_MAP_FD, 0, map_fd_),
            insn(0, 0, 0, 0, 0),
            insn(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem),
            insn(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_0, 0, 2, 0),
            insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_1, 0, 0, 1),
            insn(BPF_STX | BPF_DW | BPF_ATOMIC, BPF_REG_0, BPF_REG_1, 0, BPF_ADD),
            // 0: the kernel stops handling the hit here (no record, no perf sample).
            insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0),
            insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
        };
        static const char license[] = "GPL";
        bpf_attr p{};
        p.prog_type = BPF_PROG_TYPE_KPROBE;
        p.insns = reinterpret_cast<uint64_t>(prog);
        p.insn_cnt = sizeof prog / sizeof prog[0];
        p.license = reinterpret_cast<uint64_t>(license);
        const long fd = bpf(BPF_PROG_LOAD, p);
        if (fd < 0) {
            why = std::string("bpf(BPF_PROG_LOAD): ") + std::strerror(errno);
            return false;
        }
        prog_fd_.push_back(static_cast<int>(fd));
    }
    return true;
}

bool BpfCounter::attach(size_t site, int perf_fd, std::string& why) {
    if (ioctl(perf_fd, PERF_EVENT_IOC_SET_BPF, prog_fd_[site]) == 0) return true;
    why = std::string("PERF_EVENT_IOC_SET_BPF: ") + std::strerror(errno);
    return false;
}

std::vector<uint64_t> BpfCounter::counts() const {
    std::vector<uint64_t> out(prog_fd_.size(), 0);
    std::vector<uint64_t> per_cpu(possible_cpus());
    for (uint32_t si = 0; si < out.size(); ++si) {
        bpf_attr a{};
        a.map_fd = static_cast<uint32_t>(map_fd_);
        a.key = reinterpret_cast<uint64_t>(&si);
        a.value = reinterpret_cast<uint64_t>(per_cpu.data());
        if (bpf(BPF_MAP_LOOKUP_ELEM, a) != 0) continue;
        for (uint64_t v : per_cpu) out[si] += v;
    }
    return out;
}

}  // namespace probekit::trace
