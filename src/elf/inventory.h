// The probes an operator asked about: of files, or of every object mapped
// into a process, with runtime addresses and current gate values.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "elf/probes.h"

namespace probekit::elf {

struct GateValue {
    uint16_t external = 0;  // the SDT semaphore: tracers (uprobe ref_ctr, gdb, stap)
    uint16_t inproc = 0;    // the in-process runtime's count
};

struct ObjectReport {
    std::string path;          // as the user or /proc/PID/maps names it
    ProbeSet probes;
    uint64_t bias = 0;         // runtime = link-time + bias (0 for files)
    bool live = false;         // read from a process
    // Per probe (same order as probes.probes), when live: the gate words.
    std::vector<std::optional<GateValue>> gates;
    std::string gate_error;    // why gates could not be read
};

// The attach path of one of obj's sites (read_probes decides them all in
// one sequential sweep of the code; a site from elsewhere is looked up).
AttachPath attach_path(const ObjectReport& obj, const SiteInfo& site);

// Reads one file. On failure returns nullopt with `error` naming the problem.
std::optional<ObjectReport> inspect_file(const std::string& path, std::string& error);

// Reads every ELF object mapped into `pid` that has probes.
std::optional<std::vector<ObjectReport>> inspect_process(pid_t pid, std::string& error);

}  // namespace probekit::elf
