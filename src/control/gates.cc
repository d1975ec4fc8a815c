#include "control/gates.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "elf/inventory.h"
#include "elf/process.h"
#include "spec/probe_glob.h"

namespace probekit::control {

bool same_file(const std::string& a, const std::string& b) {
    struct stat sa {}, sb {};
    return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

namespace {

bool in_writable_mapping(const std::vector<elf::Mapping>& maps, const std::string& object, uint64_t addr) {
    for (const auto& m : maps)
        if (addr >= m.start && addr + 4 <= m.end) return m.path == object && m.perms.size() > 1 && m.perms[1] == 'w';
    return false;
}

std::string mem_error(const std::string& path, int err, const char* doing) {
    if (err == EACCES || err == EPERM)
        return std::string("permission denied ") + doing + " " + path +
               ": writing another process's memory needs CAP_SYS_PTRACE (or root)";
    return path + ": " + std::strerror(err);
}

}  // namespace

std::optional<std::vector<Gate>> find_gates(pid_t pid, const std::vector<std::string>& globs, std::string& error) {
    auto objects = elf::inspect_process(pid, error);
    if (!objects) return std::nullopt;
    auto maps = elf::read_maps(pid, error);
    if (!maps) return std::nullopt;
    std::vector<Gate> gates;
    for (const auto& o : *objects) {
        const elf::ElfObject& obj = *o.probes.object;
        const std::string open_path = same_file(o.path, obj.path()) ? o.path : obj.path();
        for (const auto& p : o.probes.probes) {
            const std::string provider(p.provider), name(p.name);
            if (p.sites.empty() || p.sites.front().semaphore == 0 || !spec::matches_probe_glob(globs, provider, name)) continue;
            const elf::SiteInfo& site = p.sites.front();
            auto sem_off = obj.file_offset(site.semaphore);
            auto site_off = obj.file_offset(site.pc);
            const uint64_t address = site.semaphore + o.bias;
            if (!sem_off || !site_off || !in_writable_mapping(*maps, o.path, address)) {
                error = o.path + ": the semaphore of " + provider + ":" + name +
                        " is not in a writable mapping of that file; refusing to touch it";
                return std::nullopt;
            }
            gates.push_back({o.path, open_path, obj.build_id(), provider, name, address, *sem_off, *site_off});
        }
    }
    return gates;
}

bool adjust_semaphore(pid_t pid, const Gate& gate, int delta, uint16_t& before, std::string& error) {
    const std::string path = "/proc/" + std::to_string(pid) + "/mem";
    const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        error = mem_error(path, errno, "opening");
        return false;
    }
    // x86-64 and the other little-endian targets: the SDT half is the word's
    // first two bytes. Another tracer may change it between the read and the
    // write; sys/sdt.h's semaphores have the same race with gdb and stap.
    uint16_t value = 0;
    bool ok = ::pread(fd, &value, sizeof value, static_cast<off_t>(gate.address)) == sizeof value;
    if (!ok) error = mem_error(path, errno, "reading");
    if (ok) {
        before = value;
        if ((delta > 0 && value == 0xffff) || (delta < 0 && value == 0)) {
            error = gate.provider + ":" + gate.name + ": semaphore is " + std::to_string(value) +
                    (delta > 0 ? ", it would wrap" : ", it would go below zero") + "; left as it is";
            ok = false;
        } else {
            value = static_cast<uint16_t>(value + delta);
            ok = ::pwrite(fd, &value, sizeof value, static_cast<off_t>(gate.address)) == sizeof value;
            if (!ok) error = mem_error(path, errno, "writing");
        }
    }
    ::close(fd);
    return ok;
}

}  // namespace probekit::control
