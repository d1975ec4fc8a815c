// The probes of one ELF object, read from .note.stapsdt (where and how) and
// .note.probekit (what: names, types, docs; docs/note-probekit.md).
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "elf/argspec.h"
#include "elf/elf_object.h"

namespace probekit::elf {

struct ProbeArgMeta {
    uint8_t kind = 0;       // as in .note.probekit: 0 untyped ... 8 string
    int8_t sdt_size = 0;
    std::string_view name;  // may be empty
    std::string_view type;  // as written in the spec
};

struct ProbeMeta {
    std::vector<ProbeArgMeta> args;
    std::string_view doc;
};

// A site's argument string as written in the note: NUL-terminated text in
// the set, one copy per distinct string (a listing of 20,000 sites has
// 9,000). A pointer rather than a string_view keeps SiteInfo at 24 bytes.
struct ArgsText {
    const char* text = "";
    operator std::string_view() const { return text; }
    std::string_view view() const { return text; }
};

struct SiteInfo {
    uint64_t pc = 0;          // link-time address, .stapsdt.base adjustment applied
    uint64_t semaphore = 0;   // link-time address, 0 when the probe has none
    ArgsText args;            // the argument string as written in the note
};

// How the running kernel will attach a uprobe to a site: a 5-byte NOP on
// a kernel with fast uprobes becomes a call, anything else a trap.
enum class AttachPath : uint8_t { FastCall, Int3, Unknown };

// Whether this kernel turns uprobes on 5-byte NOPs into calls (Linux 6.18+
// on x86-64, the uprobe syscall present).
bool kernel_has_fast_uprobes();

struct ProbeInfo {
    std::string_view provider;
    std::string_view name;
    std::span<const SiteInfo> sites;  // in note order, inside ProbeSet::sites
    const ProbeMeta* meta = nullptr;  // from .note.probekit, when present
};

// Everything read from one object. String views point into the object's
// mapping, which the set keeps open, or into the set's own copies.
struct ProbeSet {
    std::unique_ptr<ElfObject> object;
    std::vector<ProbeInfo> probes;  // in order of first appearance
    std::vector<SiteInfo> sites;    // every site, grouped by probe (in the order of `probes`)
    std::vector<AttachPath> attach; // per site, as `sites`: decided while reading (see attach_path)
    // What views point into besides the object's mapping: the sites'
    // argument strings (copied out of .note.stapsdt, which is read through
    // a window, never kept; each distinct string once) and the probes'
    // provider and name.
    std::unique_ptr<char[]> args_text;
    std::deque<std::string> strings;
    std::vector<std::unique_ptr<ProbeMeta>> metas;
    std::vector<std::string> problems;  // malformed notes, skipped (never fatal)
    bool has_base_section = false;
};

// Reads both notes of `object`.
ProbeSet read_probes(std::unique_ptr<ElfObject> object);

// The name of a .note.probekit kind byte ("signed", "string", ...).
const char* meta_kind_name(uint8_t kind);

}  // namespace probekit::elf
