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

struct SiteInfo {
    uint64_t pc = 0;          // link-time address, .stapsdt.base adjustment applied
    uint64_t semaphore = 0;   // link-time address, 0 when the probe has none
    std::string_view args;    // the argument string as written in the note
};

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
    // What views point into besides the object's mapping: the sites'
    // argument strings (copied out of .note.stapsdt, which is read through
    // a window, never kept) and the probes' provider and name.
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
