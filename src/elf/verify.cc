#include "elf/verify.h"

#include <cinttypes>
#include <cstdio>
#include <map>
#include <set>

namespace probekit::elf {
namespace {

std::string hex(uint64_t v) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%" PRIx64, v);
    return buf;
}

bool aarch64_libbpf_register(std::string_view r) {
    if (r == "sp") return true;
    if (r.size() < 2 || r.size() > 3 || r[0] != 'x') return false;
    int n = 0;
    for (size_t i = 1; i < r.size(); ++i) {
        if (r[i] < '0' || r[i] > '9') return false;
        n = n * 10 + (r[i] - '0');
    }
    return n <= 30;
}

std::string str(std::string_view s) { return std::string(s); }

// Why common consumers cannot read an operand, or empty when they all can.
// From the readers of gdb 13, bpftrace 0.17 (bcc's parser), and libbpf's
// usdt.c: libbpf fails the whole probe on one unreadable argument, and bcc
// silently drops it, shifting the arguments after it.
std::string unreadable(const ArgSpec& a, Arch arch) {
    if (a.kind == OperandKind::Invalid) return "cannot be parsed: " + a.error;
    if (a.is_float) return "is a floating-point operand, which gdb, bpftrace, bcc and libbpf reject";
    const std::string_view t = a.text;
    switch (arch) {
        case Arch::X86_64:
        case Arch::I386:
            if (a.kind == OperandKind::Memory) {
                if (a.base == "rip" || a.base == "eip") return "is %rip-relative, which gdb 13 and bpftrace 0.17 reject";
                if (!a.segment.empty()) return "uses the %" + str(a.segment) + ": segment (thread-local), which gdb 13 and bpftrace 0.17 reject";
                if (!a.symbol.empty()) return "refers to the symbol '" + str(a.symbol) + "', which bpftrace and libbpf cannot resolve";
                if (a.base.empty()) return "is an absolute address, which libbpf rejects";
            }
            if (a.kind == OperandKind::Register && a.reg.size() == 2 && a.reg[1] == 'h')
                return "uses the high-byte register %" + str(a.reg) + ", which libbpf rejects";
            if (a.kind == OperandKind::Constant && t.find("0x") != std::string_view::npos) return "is a hex constant, which libbpf misreads";
            break;
        case Arch::AArch64:
            if (t.find('#') != std::string_view::npos) return "uses '#', which libbpf's and bcc's aarch64 readers reject";
            if (a.kind == OperandKind::Register && !aarch64_libbpf_register(a.reg))
                return "uses register " + str(a.reg) + "; libbpf and bcc read only x0-x30 and sp";
            if (a.kind == OperandKind::Memory) {
                if (!a.index.empty()) return "uses an index register, which libbpf's aarch64 reader rejects";
                if (!a.symbol.empty()) return "refers to the symbol '" + str(a.symbol) + "', which libbpf and bcc cannot resolve";
                if (!aarch64_libbpf_register(a.base)) return "uses base register " + str(a.base) + "; libbpf reads only x0-x30 and sp";
            }
            break;
        case Arch::Arm:
            if ((a.kind == OperandKind::Constant || (a.kind == OperandKind::Memory && a.offset != 0)) && t.find('#') == std::string_view::npos)
                return "has a number without '#', which libbpf's arm reader rejects";
            if (a.kind == OperandKind::Memory && !a.index.empty()) return "uses an index register, which libbpf rejects";
            break;
        default:
            if (a.kind == OperandKind::Memory && !a.symbol.empty())
                return "refers to the symbol '" + str(a.symbol) + "', which libbpf and bcc cannot resolve";
            break;
    }
    return {};
}

struct Shape {
    std::vector<std::pair<int, bool>> args;  // size, signed
    bool operator!=(const Shape& o) const { return args != o.args; }
    std::string str() const {
        std::string s;
        for (const auto& [size, sign] : args) s += (s.empty() ? "" : " ") + std::string(sign ? "-" : "") + std::to_string(size);
        return "(" + s + ")";
    }
};

}  // namespace

std::vector<Finding> verify(const ProbeSet& set, const spec::Spec* spec) {
    std::vector<Finding> out;
    const ElfObject& o = *set.object;
    auto add = [&](Severity s, const char* rule, const std::string& probe, std::string msg) {
        out.push_back({s, rule, probe, std::move(msg)});
    };
    for (const auto& p : set.problems) add(Severity::Error, "note", "", p);
    if (!set.probes.empty() && !set.has_base_section)
        add(Severity::Warning, "base", "", "no .stapsdt.base section: tracers cannot correct addresses if the object is prelinked or its sections move");

    for (const auto& p : set.probes) {
        const std::string id = std::string(p.provider) + ":" + std::string(p.name);
        std::set<uint64_t> semaphores;
        std::map<std::string, uint64_t> shapes;  // shape -> first site
        Shape first;
        for (size_t si = 0; si < p.sites.size(); ++si) {
            const SiteInfo& s = p.sites[si];
            semaphores.insert(s.semaphore);
            auto args = parse_args(s.args, o.arch());
            Shape shape;
            for (size_t k = 0; k < args.size(); ++k) {
                shape.args.emplace_back(args[k].size, args[k].is_signed);
                std::string why = unreadable(args[k], o.arch());
                if (!why.empty())
                    add(Severity::Error, "operand", id,
                        "site " + hex(s.pc) + " argument " + std::to_string(k + 1) + " '" + str(args[k].text) + "' " + why);
            }
            if (si == 0) first = shape;
            else if (shape != first)
                add(Severity::Error, "signature", id,
                    "site " + hex(s.pc) + " has arguments " + shape.str() + " but the site at " + hex(p.sites[0].pc) + " has " +
                        first.str() + ": consumers read every site with one signature");
            if (s.semaphore) {
                const Section* sec = nullptr;
                for (const auto& x : o.sections())
                    if ((x.flags & SHF_ALLOC) && s.semaphore >= x.addr && s.semaphore - x.addr < x.size) sec = &x;
                if (!sec)
                    add(Severity::Error, "semaphore", id, "semaphore " + hex(s.semaphore) + " is not inside any allocated section");
                else if (!(sec->flags & SHF_WRITE))
                    add(Severity::Error, "semaphore", id,
                        "semaphore " + hex(s.semaphore) + " is in the read-only section " + std::string(sec->name) + ": tracers cannot enable the probe");
            }
        }
        if (semaphores.size() > 1)
            add(Severity::Error, "semaphore", id,
                std::to_string(semaphores.size()) + " different semaphores for one probe: tracers enable only one of them and miss hits at the others");
        if (p.meta && !p.sites.empty()) {
            if (p.meta->args.size() != first.args.size())
                add(Severity::Error, "metadata", id,
                    ".note.probekit declares " + std::to_string(p.meta->args.size()) + " arguments, .note.stapsdt has " +
                        std::to_string(first.args.size()));
            else
                for (size_t k = 0; k < first.args.size(); ++k) {
                    int want = p.meta->args[k].sdt_size;
                    int got = first.args[k].second ? -first.args[k].first : first.args[k].first;
                    if (p.meta->args[k].kind != 0 && want != got)
                        add(Severity::Error, "metadata", id,
                            "argument " + std::to_string(k + 1) + ": .note.probekit says " + std::to_string(want) + "@, .note.stapsdt says " +
                                std::to_string(got) + "@");
                }
        }
    }

    if (spec) {
        std::set<std::string> providers;
        std::map<std::string, size_t> declared;  // id -> nargs
        for (const auto& prov : spec->providers) {
            providers.insert(prov.name);
            for (const auto& pr : prov.probes) declared[prov.name + ":" + pr.name] = pr.args.size();
        }
        std::set<std::string> present;
        for (const auto& p : set.probes) {
            const std::string id = std::string(p.provider) + ":" + std::string(p.name);
            present.insert(id);
            if (!providers.count(std::string(p.provider))) continue;
            auto it = declared.find(id);
            if (it == declared.end())
                add(Severity::Error, "spec-extra", id, "is in the binary but not declared in " + spec->path);
            else if (!p.sites.empty() && parse_args(p.sites[0].args, o.arch()).size() != it->second)
                add(Severity::Error, "spec-signature", id,
                    "has " + std::to_string(parse_args(p.sites[0].args, o.arch()).size()) + " arguments in the binary, " +
                        std::to_string(it->second) + " in " + spec->path);
        }
        for (const auto& [id, n] : declared)
            if (!present.count(id))
                add(Severity::Error, "spec-missing", id, "is declared in " + spec->path + " but no site in the binary fires it");
    }
    return out;
}

}  // namespace probekit::elf
