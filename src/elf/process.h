// The ELF objects mapped into a running process, with their load bias, and
// reads of its memory (semaphore words).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace probekit::elf {

struct Mapping {
    uint64_t start = 0, end = 0, offset = 0;
    std::string perms;  // "r-xp"
    uint64_t inode = 0;
    std::string path;   // as /proc/PID/maps shows it
};

// Parses /proc/PID/maps. On failure returns nullopt with `error` saying why
// (no such process, permission).
std::optional<std::vector<Mapping>> read_maps(pid_t pid, std::string& error);

struct LoadedObject {
    std::string path;       // as mapped
    std::string open_path;  // where to read it from (map_files or /proc/PID/root)
    std::vector<Mapping> mappings;
};

// The file-backed mappings grouped per object, in address order.
std::vector<LoadedObject> group_objects(pid_t pid, const std::vector<Mapping>& maps);

// The load bias of an object: runtime address = link-time address + bias.
// `loads` are its PT_LOAD segments as (vaddr, offset) pairs.
std::optional<uint64_t> load_bias(const LoadedObject& obj, const std::vector<std::pair<uint64_t, uint64_t>>& loads);

// Reads of a process's memory through /proc/PID/mem.
class ProcessMemory {
public:
    // On failure, `error` names the cause and what is missing (CAP_SYS_PTRACE).
    bool open(pid_t pid, std::string& error);
    bool read(uint64_t addr, void* out, size_t n, std::string& error) const;
    ~ProcessMemory();

private:
    int fd_ = -1;
    std::string path_;
};

}  // namespace probekit::elf
