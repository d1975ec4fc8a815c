#include "elf/process.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <map>

#include "util/file.h"

namespace probekit::elf {

std::optional<std::vector<Mapping>> read_maps(pid_t pid, std::string& error) {
    const std::string path = "/proc/" + std::to_string(pid) + "/maps";
    std::string err;
    auto text = util::read_file(path, err);
    if (!text) {
        if (errno == ENOENT || errno == ESRCH) error = "no process with PID " + std::to_string(pid);
        else if (errno == EACCES || errno == EPERM)
            error = "permission denied reading " + path + ": inspecting another user's process needs CAP_SYS_PTRACE (or root)";
        else error = err;
        return std::nullopt;
    }
    std::vector<Mapping> out;
    size_t pos = 0;
    while (pos < text->size()) {
        size_t eol = text->find('\n', pos);
        if (eol == std::string::npos) eol = text->size();
        std::string line = text->substr(pos, eol - pos);
        pos = eol + 1;
        Mapping m;
        char perms[8] = {};
        unsigned long long start, end, offset, inode;
        int name_at = 0;
        if (std::sscanf(line.c_str(), "%llx-%llx %7s %llx %*x:%*x %llu %n", &start, &end, perms, &offset, &inode, &name_at) < 5)
            continue;
        m.start = start;
        m.end = end;
        m.offset = offset;
        m.inode = inode;
        m.perms = perms;
        if (name_at > 0 && static_cast<size_t>(name_at) <= line.size()) m.path = line.substr(static_cast<size_t>(name_at));
        out.push_back(std::move(m));
    }
    return out;
}

std::vector<LoadedObject> group_objects(pid_t pid, const std::vector<Mapping>& maps) {
    std::vector<LoadedObject> out;
    std::map<std::pair<std::string, uint64_t>, size_t> seen;
    for (const auto& m : maps) {
        if (m.inode == 0 || m.path.empty() || m.path[0] != '/') continue;
        auto [it, fresh] = seen.try_emplace({m.path, m.inode}, out.size());
        if (fresh) {
            LoadedObject o;
            o.path = m.path;
            // map_files reaches the very file that is mapped, even when it was
            // deleted or lives in another mount namespace (root only);
            // /proc/PID/root covers the namespace case for others.
            char range[64];
            std::snprintf(range, sizeof range, "%" PRIx64 "-%" PRIx64, m.start, m.end);
            std::string map_file = "/proc/" + std::to_string(pid) + "/map_files/" + range;
            o.open_path = access(map_file.c_str(), R_OK) == 0 ? map_file : "/proc/" + std::to_string(pid) + "/root" + m.path;
            out.push_back(std::move(o));
        }
        out[it->second].mappings.push_back(m);
    }
    return out;
}

std::optional<uint64_t> load_bias(const LoadedObject& obj, const std::vector<std::pair<uint64_t, uint64_t>>& loads) {
    const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    for (const auto& m : obj.mappings) {
        for (const auto& [vaddr, offset] : loads) {
            if ((offset & ~(page - 1)) == m.offset) return m.start - (vaddr & ~(page - 1));
        }
    }
    return std::nullopt;
}

bool ProcessMemory::open(pid_t pid, std::string& error) {
    path_ = "/proc/" + std::to_string(pid) + "/mem";
    fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) {
        error = errno == EACCES || errno == EPERM
                    ? "permission denied reading " + path_ +
                          ": reading another process's memory needs CAP_SYS_PTRACE (or the same user with kernel.yama.ptrace_scope=0)"
                    : path_ + ": " + std::strerror(errno);
        return false;
    }
    return true;
}

bool ProcessMemory::read(uint64_t addr, void* out, size_t n, std::string& error) const {
    ssize_t got = pread(fd_, out, n, static_cast<off_t>(addr));
    if (got != static_cast<ssize_t>(n)) {
        error = got < 0 ? path_ + ": " + std::strerror(errno) : path_ + ": short read";
        return false;
    }
    return true;
}

ProcessMemory::~ProcessMemory() {
    if (fd_ >= 0) ::close(fd_);
}

}  // namespace probekit::elf
