#include "elf/probes.h"

#include <cstring>
#include <string>
#include <unordered_map>

namespace probekit::elf {
namespace {

constexpr uint32_t kNtStapsdt = 3;
constexpr uint32_t kNtProbekit = 1;

uint64_t read_uint(const char* p, size_t size, bool little) {
    uint64_t v = 0;
    for (size_t i = 0; i < size; ++i) {
        auto b = static_cast<uint8_t>(p[little ? size - 1 - i : i]);
        v = (v << 8) | b;
    }
    return v;
}

// A NUL-terminated string inside [p, end): advances p past it, or fails.
bool take_cstr(const char*& p, const char* end, std::string_view& out) {
    const void* nul = p < end ? std::memchr(p, '\0', static_cast<size_t>(end - p)) : nullptr;
    if (!nul) return false;
    out = std::string_view(p, static_cast<size_t>(static_cast<const char*>(nul) - p));
    p = static_cast<const char*>(nul) + 1;
    return true;
}

struct Key {
    std::string_view provider, name;
    bool operator==(const Key& o) const { return provider == o.provider && name == o.name; }
};
struct KeyHash {
    size_t operator()(const Key& k) const {
        return std::hash<std::string_view>()(k.provider) * 31 + std::hash<std::string_view>()(k.name);
    }
};

template <class F>
void for_each_note(const ElfObject& o, std::string_view section, F&& f) {
    for (const auto& s : o.sections()) {
        if (s.type != SHT_NOTE || s.name != section) continue;
        Elf_Data* d = elf_getdata(s.scn, nullptr);
        if (!d || !d->d_buf) continue;
        const char* buf = static_cast<const char*>(d->d_buf);
        GElf_Nhdr nh;
        size_t off = 0, name_off = 0, desc_off = 0;
        // gelf_getnote checks every header against the buffer's size.
        while ((off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
            if (desc_off > d->d_size || nh.n_descsz > d->d_size - desc_off) break;
            std::string_view owner(buf + name_off, nh.n_namesz ? nh.n_namesz - 1 : 0);
            f(nh.n_type, owner, buf + desc_off, static_cast<size_t>(nh.n_descsz));
        }
    }
}

}  // namespace

const char* meta_kind_name(uint8_t kind) {
    static const char* const names[] = {"untyped", "signed", "unsigned", "char", "bool", "float", "double", "pointer", "string"};
    return kind < 9 ? names[kind] : "unknown";
}

ProbeSet read_probes(std::unique_ptr<ElfObject> object) {
    ProbeSet set;
    set.object = std::move(object);
    const ElfObject& o = *set.object;
    const size_t psize = o.is_64bit() ? 8 : 4;
    const bool little = o.little_endian();

    uint64_t base = 0;
    if (const Section* b = o.section(".stapsdt.base")) {
        base = b->addr;
        set.has_base_section = true;
    }

    std::unordered_map<Key, size_t, KeyHash> index;
    for_each_note(o, ".note.stapsdt", [&](uint32_t type, std::string_view owner, const char* desc, size_t size) {
        if (type != kNtStapsdt || owner != "stapsdt") return;
        const char* end = desc + size;
        if (size < 3 * psize) {
            set.problems.push_back("a .note.stapsdt entry is too short");
            return;
        }
        SiteInfo site;
        site.pc = read_uint(desc, psize, little);
        uint64_t base_ref = read_uint(desc + psize, psize, little);
        site.semaphore = read_uint(desc + 2 * psize, psize, little);
        // As gdb and bcc do: the note holds the link-time address of
        // .stapsdt.base; if the object was prelinked or its sections moved,
        // shift the site and semaphore by the same amount.
        if (set.has_base_section && base_ref != 0) {
            site.pc += base - base_ref;
            if (site.semaphore) site.semaphore += base - base_ref;
        }
        const char* p = desc + 3 * psize;
        std::string_view provider, name;
        if (!take_cstr(p, end, provider) || !take_cstr(p, end, name) || !take_cstr(p, end, site.args)) {
            set.problems.push_back("a .note.stapsdt entry has an unterminated string");
            return;
        }
        auto [it, fresh] = index.try_emplace(Key{provider, name}, set.probes.size());
        if (fresh) set.probes.push_back({provider, name, {}, nullptr});
        set.probes[it->second].sites.push_back(site);
    });

    for_each_note(o, ".note.probekit", [&](uint32_t type, std::string_view owner, const char* desc, size_t size) {
        if (type != kNtProbekit || owner != "probekit") return;
        const char* p = desc;
        const char* end = desc + size;
        if (size < 4) {
            set.problems.push_back("a .note.probekit entry is too short");
            return;
        }
        const auto version = static_cast<uint8_t>(p[0]);
        const auto nargs = static_cast<uint8_t>(p[1]);
        if (version != 1) return;  // a newer format: skip, as the format says
        p += 4;
        std::string_view provider, name;
        auto meta = std::make_unique<ProbeMeta>();
        bool ok = take_cstr(p, end, provider) && take_cstr(p, end, name);
        for (unsigned i = 0; ok && i < nargs; ++i) {
            ProbeArgMeta a;
            if (end - p < 2) {
                ok = false;
                break;
            }
            a.kind = static_cast<uint8_t>(p[0]);
            a.sdt_size = static_cast<int8_t>(p[1]);
            p += 2;
            ok = take_cstr(p, end, a.name) && take_cstr(p, end, a.type);
            meta->args.push_back(a);
        }
        ok = ok && take_cstr(p, end, meta->doc);
        if (!ok) {
            set.problems.push_back("a .note.probekit entry is truncated");
            return;
        }
        auto it = index.find(Key{provider, name});
        if (it == index.end()) return;  // metadata without a site: nothing fires it here
        ProbeInfo& probe = set.probes[it->second];
        if (probe.meta) return;         // duplicates (e.g. ld -r): the first wins
        probe.meta = meta.get();
        set.metas.push_back(std::move(meta));
    });
    return set;
}

}  // namespace probekit::elf
