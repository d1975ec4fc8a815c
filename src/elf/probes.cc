#include "elf/probes.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <string>

#include "elf/note_reader.h"

namespace probekit::elf {
namespace {

constexpr uint32_t kNtStapsdt = 3;
constexpr uint32_t kNtProbekit = 1;

// A 4- or 8-byte address in the object's byte order.
uint64_t read_uint(const char* p, size_t size, bool little) {
    if (size == 8) {
        uint64_t v;
        std::memcpy(&v, p, 8);
        return little == (std::endian::native == std::endian::little) ? v : __builtin_bswap64(v);
    }
    uint32_t v;
    std::memcpy(&v, p, 4);
    return little == (std::endian::native == std::endian::little) ? v : __builtin_bswap32(v);
}

// A NUL-terminated string inside [p, end): advances p past it, or fails.
bool take_cstr(const char*& p, const char* end, std::string_view& out) {
    const void* nul = p < end ? std::memchr(p, '\0', static_cast<size_t>(end - p)) : nullptr;
    if (!nul) return false;
    out = std::string_view(p, static_cast<size_t>(static_cast<const char*>(nul) - p));
    p = static_cast<const char*>(nul) + 1;
    return true;
}

// a == b for the short strings of notes, inline: std::string_view's
// operator== goes through memcmp, a call per site.
bool same(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    const char* x = a.data();
    const char* y = b.data();
    size_t n = a.size();
    for (; n >= 8; x += 8, y += 8, n -= 8) {
        uint64_t u, v;
        std::memcpy(&u, x, 8);
        std::memcpy(&v, y, 8);
        if (u != v) return false;
    }
    for (; n; ++x, ++y, --n)
        if (*x != *y) return false;
    return true;
}

// A string hash for probe names, 8 bytes at a time: names are short, and
// std::hash<string_view> per field plus unordered_map's node chasing was a
// tenth of reading the notes.
uint64_t hash_bytes(std::string_view s, uint64_t h) {
    constexpr uint64_t k = 0x9e3779b97f4a7c15ull;
    const char* p = s.data();
    size_t n = s.size();
    for (; n >= 8; p += 8, n -= 8) {
        uint64_t v;
        std::memcpy(&v, p, 8);
        h = (h ^ v) * k;
        h ^= h >> 31;
    }
    // The last 0 to 7 bytes: overlapping loads rather than a step per byte.
    uint64_t v = 0;
    if (s.size() >= 8) {
        std::memcpy(&v, s.data() + s.size() - 8, 8);
    } else if (n >= 4) {
        uint32_t lo, hi;
        std::memcpy(&lo, p, 4);
        std::memcpy(&hi, p + n - 4, 4);
        v = static_cast<uint64_t>(hi) << 32 | lo;
    } else {
        for (size_t i = 0; i < n; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(p[i])) << (8 * i);
    }
    h ^= v ^ (static_cast<uint64_t>(s.size()) << 56);
    // MurmurHash3's finalizer: a product carries differences only upwards,
    // and tables index with the low bits.
    h = (h ^ (h >> 33)) * 0xff51afd7ed558ccdull;
    h = (h ^ (h >> 33)) * 0xc4ceb9fe1a85ec53ull;
    return h ^ (h >> 33);
}

// The probes by provider and name: open addressing over indexes into `probes`.
class ProbeIndex {
public:
    explicit ProbeIndex(const std::vector<ProbeInfo>& probes) : probes_(probes), slots_(64, 0) {}
    // The probe's index, or -1; `hash` is filled for insert().
    int64_t find(std::string_view provider, std::string_view name, uint64_t& hash) const {
        hash = hash_bytes(name, hash_bytes(provider, 0));
        const size_t mask = slots_.size() - 1;
        for (size_t i = hash & mask;; i = (i + 1) & mask) {
            const uint64_t e = slots_[i];
            if (!e) return -1;
            if ((e >> 32) == (hash >> 32)) {
                const ProbeInfo& p = probes_[static_cast<uint32_t>(e) - 1];
                if (same(p.name, name) && same(p.provider, provider)) return static_cast<uint32_t>(e) - 1;
            }
        }
    }
    // Records probes_[index] (which find did not find) under `hash`.
    void insert(uint32_t index, uint64_t hash) {
        if (2 * (used_ + 1) > slots_.size()) grow();
        place(hash, index);
        ++used_;
    }

private:
    void place(uint64_t hash, uint32_t index) {
        const size_t mask = slots_.size() - 1;
        size_t i = hash & mask;
        while (slots_[i]) i = (i + 1) & mask;
        slots_[i] = (hash & ~uint64_t{0xffffffff}) | (index + 1);
    }
    void grow() {
        std::vector<uint64_t> old(slots_.size() * 2, 0);
        old.swap(slots_);
        for (uint64_t e : old) {
            if (!e) continue;
            const uint32_t index = static_cast<uint32_t>(e) - 1;
            place(hash_bytes(probes_[index].name, hash_bytes(probes_[index].provider, 0)), index);
        }
    }
    const std::vector<ProbeInfo>& probes_;
    std::vector<uint64_t> slots_;
    size_t used_ = 0;
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
                        std::string_view& provider, std::string_view& name, std::string_view& args, SiteInfo& site) {
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
    if (!take_cstr(p, end, provider) || !take_cstr(p, end, name) || !take_cstr(p, end, args))
        return "a .note.stapsdt entry has an unterminated string";
    return nullptr;
}

// Calls f(provider, name, args, site) for every well-formed site of every
// .note.stapsdt section, streaming the section (see NoteReader); the views
// last for the call only (site.args is not set). Malformed entries go to `problems` when given.
template <class F>
void for_each_site(const ElfObject& o, F&& f, size_t psize, bool little, const uint64_t* base, std::vector<std::string>* problems) {
    for (const auto& s : o.sections()) {
        if (s.type != SHT_NOTE || s.name != ".note.stapsdt") continue;
        NoteReader reader(o, s);
        Note n;
        while (reader.next(n)) {
            if (n.type != kNtStapsdt || n.owner != "stapsdt") continue;
            std::string_view provider, name, args;
            SiteInfo site;
            if (const char* problem = decode_site(n.desc.data(), n.desc.size(), psize, little, base, provider, name, args, site)) {
                if (problems) problems->push_back(problem);
                continue;
            }
            f(provider, name, args, site);
        }
    }
}

// The sites' argument strings, each distinct one stored once, NUL-terminated,
// in a buffer sized up front (the views must not move): most sites repeat
// another's registers. Open addressing over offsets into the buffer.
class ArgsTable {
public:
    // `capacity`: at least the sum of the strings' sizes plus one each.
    explicit ArgsTable(uint64_t capacity)
        : text_(new char[static_cast<size_t>(capacity)]), capacity_(capacity), slots_(1024, 0) {}
    // The stored copy of `s`, or null when it does not fit.
    const char* intern(std::string_view s) {
        const uint64_t h = hash_bytes(s, 0);
        size_t mask = slots_.size() - 1;
        size_t i = h & mask;
        for (; slots_[i]; i = (i + 1) & mask) {
            // Equal when t holds s and its NUL: a string stored that far
            // ends inside what is used, so the comparison stays there.
            const uint64_t off = slots_[i] - 1;
            const char* t = text_.get() + off;
            if (s.size() < used_ - off && t[s.size()] == '\0' && same({t, s.size()}, s)) return t;
        }
        // Offsets are 32-bit: past 4 GiB, strings are stored without the table.
        if (s.size() >= capacity_ - used_) return nullptr;
        char* t = text_.get() + used_;
        std::memcpy(t, s.data(), s.size());
        t[s.size()] = '\0';
        if (used_ < UINT32_MAX) {
            if (4 * (count_ + 1) > 3 * slots_.size()) {
                grow();
                mask = slots_.size() - 1;
                for (i = h & mask; slots_[i]; i = (i + 1) & mask) {
                }
            }
            slots_[i] = static_cast<uint32_t>(used_ + 1);
            ++count_;
        }
        used_ += s.size() + 1;
        return t;
    }
    std::unique_ptr<char[]> release() { return std::move(text_); }

private:
    void grow() {
        std::vector<uint32_t> old(slots_.size() * 2, 0);
        old.swap(slots_);
        const size_t mask = slots_.size() - 1;
        for (uint32_t e : old) {
            if (!e) continue;
            size_t i = hash_bytes(text_.get() + (e - 1), 0) & mask;
            while (slots_[i]) i = (i + 1) & mask;
            slots_[i] = e;
        }
    }
    std::unique_ptr<char[]> text_;
    uint64_t capacity_, used_ = 0;
    std::vector<uint32_t> slots_;  // offset + 1, 0 for free
    size_t count_ = 0;
};

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

    // One pass over the notes stores every site once, in note order, into
    // arrays reserved for the most sites and argument bytes the sections can
    // hold (address space only: pages are touched as sites arrive), then
    // groups the sites by probe in place. Vectors per probe would waste up
    // to half their capacity and copy on every growth; a second pass to size
    // them would read and decode every note twice.
    uint64_t note_bytes = 0;
    for (const auto& s : o.sections())
        if (s.type == SHT_NOTE && s.name == ".note.stapsdt") note_bytes += std::min<uint64_t>(s.size, o.file_size());
    // The smallest entry: header, "stapsdt", three addresses and three NULs.
    const uint64_t max_sites = note_bytes / (20 + ((3 * psize + 3 + 3) & ~size_t{3}));
    set.sites.reserve(static_cast<size_t>(max_sites));
    set.attach.reserve(static_cast<size_t>(max_sites));
    std::vector<uint32_t> owner;  // per site: its probe
    owner.reserve(static_cast<size_t>(max_sites));
    // Each argument string and its NUL lie inside its entry.
    ArgsTable args_table(note_bytes);
    std::vector<size_t> count;  // per probe

    ProbeIndex index(set.probes);
    // The attach path of each site, decided in note order: in linked objects
    // that is address order, so the code is read once, through a window.
    CodeReader code(o);
    const bool x86_64 = o.arch() == Arch::X86_64;
    const bool fast_kernel = x86_64 && kernel_has_fast_uprobes();
    const uint64_t* base_ptr = set.has_base_section ? &base : nullptr;
    uint32_t last = UINT32_MAX;  // consecutive sites of one probe are common
    for_each_site(o, [&](std::string_view provider, std::string_view name, std::string_view args, SiteInfo site) {
        // Every argument string lies inside its entry, inside the sections
        // counted above; checked all the same, as the views depend on it.
        const char* stored = args_table.intern(args);
        if (!stored) {
            set.problems.push_back("a .note.stapsdt entry does not fit its section");
            return;
        }
        uint32_t pi = last;
        if (pi == UINT32_MAX || !same(set.probes[pi].name, name) || !same(set.probes[pi].provider, provider)) {
            uint64_t hash = 0;
            const int64_t found = index.find(provider, name, hash);
            if (found >= 0) {
                pi = static_cast<uint32_t>(found);
            } else {
                // Views of the copies: the reader's views last one entry.
                const std::string& prov = set.strings.emplace_back(provider);
                const std::string& nm = set.strings.emplace_back(name);
                pi = static_cast<uint32_t>(set.probes.size());
                set.probes.push_back({prov, nm, {}, nullptr});
                index.insert(pi, hash);
                count.push_back(0);
            }
            last = pi;
        }
        ++count[pi];
        owner.push_back(pi);
        site.args.text = stored;
        set.sites.push_back(site);
        AttachPath path = AttachPath::Int3;
        if (x86_64) {
            // As bytes_at(pc, 5): no file bytes there means Unknown; a
            // 5-byte NOP on a fast kernel, a call.
            static const char nop5[] = {'\x0f', '\x1f', '\x44', '\x00', '\x00'};
            if (fast_kernel) {
                char b[5];
                const size_t got = code.read(site.pc, 5, b);
                path = got == 0 ? AttachPath::Unknown
                       : got == 5 && std::memcmp(b, nop5, 5) == 0 ? AttachPath::FastCall
                                                                 : AttachPath::Int3;
            } else if (!code.backed(site.pc)) {
                path = AttachPath::Unknown;
            }
        }
        set.attach.push_back(path);
    }, psize, little, base_ptr, &set.problems);

    set.args_text = args_table.release();

    // Group by probe, keeping note order within each: owner[k] becomes
    // site k's place, then every cycle of the permutation is rotated.
    {
        std::vector<size_t> next(count.size());
        for (size_t i = 1; i < count.size(); ++i) next[i] = next[i - 1] + count[i - 1];
        for (auto& w : owner) w = static_cast<uint32_t>(next[w]++);
        for (size_t k = 0; k < owner.size(); ++k) {
            while (owner[k] != k) {
                const uint32_t d = owner[k];
                std::swap(set.sites[k], set.sites[d]);
                std::swap(set.attach[k], set.attach[d]);
                std::swap(owner[k], owner[d]);
            }
        }
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
        uint64_t hash = 0;
        const int64_t found = index.find(provider, name, hash);
        if (found < 0) return;  // metadata without a site: nothing fires it here
        ProbeInfo& probe = set.probes[static_cast<size_t>(found)];
        if (probe.meta) return;         // duplicates (e.g. ld -r): the first wins
        probe.meta = meta.get();
        set.metas.push_back(std::move(meta));
    });
    return set;
}

}  // namespace probekit::elf
