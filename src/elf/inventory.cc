#include "elf/inventory.h"

#include <sys/utsname.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <string>

#include "elf/process.h"

namespace probekit::elf {

bool kernel_has_fast_uprobes() {
    // Linux 6.18 added the uprobe syscall and its trampolines on x86-64. The
    // release is the cheap test (reading /proc/kallsyms for the syscall takes
    // longer than listing 20,000 sites).
    static const bool fast = [] {
#if defined(__x86_64__)
        struct utsname u {};
        int major = 0, minor = 0;
        return uname(&u) == 0 && std::sscanf(u.release, "%d.%d", &major, &minor) == 2 &&
               (major > 6 || (major == 6 && minor >= 18));
#else
        return false;
#endif
    }();
    return fast;
}

AttachPath attach_path(const ObjectReport& obj, const SiteInfo& site) {
    const ProbeSet& set = obj.probes;
    const std::less<const SiteInfo*> before;
    if (set.attach.size() == set.sites.size() && !set.sites.empty() && !before(&site, set.sites.data()) &&
        before(&site, set.sites.data() + set.sites.size()))
        return set.attach[static_cast<size_t>(&site - set.sites.data())];
    // Not one of the set's own sites: read the code.
    const ElfObject& o = *set.object;
    if (o.arch() != Arch::X86_64) return AttachPath::Int3;
    std::string_view b = o.bytes_at(site.pc, 5);
    if (b.empty()) return AttachPath::Unknown;
    static const char nop5[] = {'\x0f', '\x1f', '\x44', '\x00', '\x00'};
    if (b.size() == 5 && std::memcmp(b.data(), nop5, 5) == 0 && kernel_has_fast_uprobes()) return AttachPath::FastCall;
    return AttachPath::Int3;
}

std::optional<ObjectReport> inspect_file(const std::string& path, std::string& error) {
    auto obj = ElfObject::open(path, error);
    if (!obj) return std::nullopt;
    ObjectReport r;
    r.path = path;
    r.probes = read_probes(std::move(obj));
    return r;
}

std::optional<std::vector<ObjectReport>> inspect_process(pid_t pid, std::string& error) {
    auto maps = read_maps(pid, error);
    if (!maps) return std::nullopt;
    std::vector<ObjectReport> out;
    ProcessMemory mem;
    std::string mem_error;
    bool mem_ok = false, mem_tried = false;
    for (const auto& lo : group_objects(pid, *maps)) {
        std::string err;
        auto obj = ElfObject::open(lo.open_path, err);
        if (!obj) continue;  // not ELF (a data file, a font): nothing to list
        std::vector<std::pair<uint64_t, uint64_t>> loads;
        for (const auto& s : obj->load_segments()) loads.emplace_back(s.vaddr, s.offset);
        ObjectReport r;
        r.path = lo.path;
        r.live = true;
        r.probes = read_probes(std::move(obj));
        if (r.probes.probes.empty()) continue;
        auto bias = load_bias(lo, loads);
        r.bias = bias.value_or(0);
        if (!mem_tried) {
            mem_ok = mem.open(pid, mem_error);
            mem_tried = true;
        }
        for (const auto& p : r.probes.probes) {
            std::optional<GateValue> g;
            uint64_t sem = p.sites.empty() ? 0 : p.sites[0].semaphore;
            if (sem && mem_ok && bias) {
                unsigned char w[4];
                std::string e;
                if (mem.read(sem + r.bias, w, sizeof w, e)) {
                    const bool little = r.probes.object->little_endian();
                    auto half = [&](int i) { return static_cast<uint16_t>(little ? w[i] | (w[i + 1] << 8) : (w[i] << 8) | w[i + 1]); };
                    // The runtime's count sits only beside probekit gates; the
                    // word after a plain sys/sdt.h semaphore is someone else's.
                    g = GateValue{half(0), p.meta ? half(2) : uint16_t(0)};
                } else if (r.gate_error.empty()) {
                    r.gate_error = e;
                }
            }
            r.gates.push_back(g);
        }
        if (!mem_ok) r.gate_error = mem_error;
        out.push_back(std::move(r));
    }
    return out;
}

}  // namespace probekit::elf
