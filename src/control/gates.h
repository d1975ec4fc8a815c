// The gates of a running process that an operator opens and closes:
// `probekit enable` / `disable`. A gate is the 32-bit word beside each probe
// (docs/generated-header.md): its low 16 bits are the SDT semaphore that
// external tracers count in, the only half these functions touch.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace probekit::control {

struct Gate {
    std::string object;      // as /proc/PID/maps names it
    std::string open_path;   // a path to the same file, for the kernel (uprobes)
    std::string build_id;    // hex, of the file read (empty when it has none)
    std::string provider, name;
    uint64_t address = 0;        // runtime address of the gate word
    uint64_t file_offset = 0;    // its file offset: a uprobe's ref_ctr_offset
    uint64_t site_offset = 0;    // file offset of the probe's first site
};

// The gated probes of `pid` that match any of `globs` ('provider:name', a
// name alone matches in any provider; names as written or with '-' for '__').
// Probes without a semaphore cannot be enabled and are left out; each gate
// is checked to lie in a writable mapping of its own file.
std::optional<std::vector<Gate>> find_gates(pid_t pid, const std::vector<std::string>& globs, std::string& error);

// Whether two paths name the same file (device and inode).
bool same_file(const std::string& a, const std::string& b);

// Adds `delta` (+1 or -1) to a gate's SDT semaphore through /proc/PID/mem.
// Refuses to wrap past 0xffff or go below zero. `before` is the value read.
bool adjust_semaphore(pid_t pid, const Gate& gate, int delta, uint16_t& before, std::string& error);

}  // namespace probekit::control
