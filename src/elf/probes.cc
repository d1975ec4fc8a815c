#include "elf/probes.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <unordered_map>

#include "elf/note_reader.h"

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

// One .note.stapsdt entry: three addresses, then provider, name and
// arguments as NUL-terminated strings. Returns why it is malformed, or null.
// `base` is the address of .stapsdt.base when the object has one.
const char* decode_site(const char* desc, size_t size, size_t psize, bool little, const uint64_t* base,
                        std::string_view& provider, std::string_view& name, SiteInfo& site) {
    if (size < 3 * psize) return "a .note.stapsdt entry is too short";
    site.pc = read_uint(desc, psize, little);
    const uint64_t base_ref = read_uint(desc + psize, psize, little);
    site.semaphore = read_uint(desc + 2 * psize, psize, little);
    // As gdb and bcc do: the note holds the link-time address of
    // .stapsdt.base; if the object was prelinked or its sections moved,
    // shift the site and semaphore by the same amount.
    if (base && base_ref != 0) {
        site.pc += *base - base_ref;
        if (site.semaphore) site.semaphore += *base - base_ref;
    }
    const char* p = desc + 3 * psize;
    const char* end = desc + size;
    if (!take_cstr(p, end, provider) || !take_cstr(p, end, name) || !take_cstr(p, end, site.args))
        return "a .note.stapsdt entry has an unterminated string";
    return nullptr;
}

// Calls f(provider, name, site) for every well-formed site of every
// .note.stapsdt section, streaming the section (see NoteReader); the views
// last for the call only. Malformed entries go to `problems` when given.
template <class F>
void for_each_site(const ElfObject& o, F&& f, size_t psize, bool little, const uint64_t* base, std::vector<std::string>* problems) {
    for (const auto& s : o.sections()) {
        if (s.type != SHT_NOTE || s.name != ".note.stapsdt") continue;
        NoteReader reader(o, s);
        Note n;
        while (reader.next(n)) {
            if (n.type != kNtStapsdt || n.owner != "stapsdt") continue;
            std::string_view provider, name;
            SiteInfo site;
            if (const char* problem = decode_site(n.desc.data(), n.desc.size(), psize, little, base, provider, name, site)) {
                if (problems) problems->push_back(problem);
                continue;
            }
            f(provider, name, site);
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

    // Two passes over the notes, so that every site is stored once, grouped
    // by probe, in exactly-sized arrays (vectors per probe would waste up to
    // half their capacity and copy on every growth): the first finds the
    // probes and sizes everything, the second places each site and copies
    // its argument string next to its probe's others.
    std::unordered_map<Key, uint32_t, KeyHash> index;
    std::vector<uint32_t> owner;  // per well-formed note: its probe
    std::vector<size_t> count, text;  // per probe: sites, argument bytes
    const uint64_t* base_ptr = set.has_base_section ? &base : nullptr;
    for_each_site(o, [&](std::string_view provider, std::string_view name, const SiteInfo& site) {
        auto it = index.find(Key{provider, name});
        if (it == index.end()) {
            // Keyed by the copies: the reader's views last one entry.
            const std::string& prov = set.strings.emplace_back(provider);
            const std::string& nm = set.strings.emplace_back(name);
            it = index.emplace(Key{prov, nm}, static_cast<uint32_t>(set.probes.size())).first;
            set.probes.push_back({prov, nm, {}, nullptr});
            count.push_back(0);
            text.push_back(0);
        }
        ++count[it->second];
        text[it->second] += site.args.size();
        owner.push_back(it->second);
    }, psize, little, base_ptr, &set.problems);

    std::vector<size_t> next_site(count.size()), next_text(count.size());
    for (size_t i = 1; i < count.size(); ++i) {
        next_site[i] = next_site[i - 1] + count[i - 1];
        next_text[i] = next_text[i - 1] + text[i - 1];
    }
    const size_t total_text = count.empty() ? 0 : next_text.back() + text.back();
    set.sites.resize(owner.size());
    set.args_text.reset(new char[total_text]);
    size_t k = 0;
    bool changed = false;  // the file no longer holds what the first pass read
    for_each_site(o, [&](std::string_view provider, std::string_view name, SiteInfo site) {
        if (changed || k >= owner.size()) {
            changed = true;
            return;
        }
        const uint32_t pi = owner[k++];
        const ProbeInfo& p = set.probes[pi];
        const size_t site_end = (pi + 1 < count.size() ? next_site[pi + 1] : set.sites.size());
        const size_t text_end = (pi + 1 < count.size() ? next_text[pi + 1] : total_text);
        if (provider != p.provider || name != p.name || next_site[pi] >= site_end || site.args.size() > text_end - next_text[pi]) {
            changed = true;
            return;
        }
        char* t = set.args_text.get() + next_text[pi];
        std::copy(site.args.begin(), site.args.end(), t);
        next_text[pi] += site.args.size();
        site.args = std::string_view(t, site.args.size());
        set.sites[next_site[pi]++] = site;
    }, psize, little, base_ptr, nullptr);
    if (changed || k != owner.size()) {
        set.problems.push_back(".note.stapsdt changed while it was read; no probes listed");
        set.probes.clear();
        set.sites.clear();
        return set;
    }
    for (size_t i = 0, at = 0; i < set.probes.size(); at += count[i], ++i)
        set.probes[i].sites = std::span<const SiteInfo>(set.sites.data() + at, count[i]);

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
