// The entries of one SHT_NOTE section, in order, read through a small
// window of the file instead of the whole section.
//
// Why not libelf's elf_getdata + gelf_getnote (used for the small notes):
// .note.stapsdt holds one entry per probe site, megabytes in large
// binaries, and libelf hands it out whole, so listing would keep it all in
// memory; `probekit list` must stay below readelf's footprint. The format
// is a 12-byte header and two padded fields; every size is checked against
// the section, as gelf_getnote does.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "elf/elf_object.h"

namespace probekit::elf {

struct Note {
    uint32_t type = 0;
    std::string_view owner;  // without its NUL ("stapsdt")
    std::string_view desc;
};

class NoteReader {
public:
    NoteReader(const ElfObject& object, const Section& section);
    // The next entry; its views last until the next call. False at the end,
    // and from an entry that does not fit the section on (as gelf_getnote).
    bool next(Note& note);

private:
    // Makes section bytes [off, off + n) available in the window.
    bool window(uint64_t off, uint64_t n);
    uint32_t u32(const char* p) const;

    const ElfObject& object_;
    uint64_t file_off_, size_, align_;
    uint64_t pos_ = 0;                  // section offset of the next entry
    uint64_t win_start_ = 0, win_len_ = 0;
    std::unique_ptr<char[]> buf_;
    size_t cap_ = 0;
    bool malformed_ = false;
};

// Bytes at link-time addresses (as ElfObject::bytes_at), copied through a
// small window of the file instead of touching the mapping: deciding the
// attach path of every site reads 5 bytes per site across the whole of
// .text, and faulting those pages in would cost more time and resident
// memory than the rest of a listing. Sites come in address order in the
// notes of linked objects, so the window grows while reads are sequential
// (up to 16 KiB) and falls back to one page when they jump around.
class CodeReader {
public:
    explicit CodeReader(const ElfObject& object) : object_(object) {}
    // Copies up to `n` (at most 16) bytes at `addr` into `out`; returns how
    // many: as many as bytes_at(addr, n) has, or 0 when the address is not
    // backed by file content or the file cannot be read.
    size_t read(uint64_t addr, size_t n, char* out);
    // Whether read(addr, 1, ...) would find file content (without reading it).
    bool backed(uint64_t addr);

private:
    const ElfObject& object_;
    uint64_t win_off_ = 0, win_len_ = 0;  // file offsets in the window
    uint64_t next_len_ = 0;
    std::unique_ptr<char[]> buf_;
    const Section* last_ = nullptr;  // the section of the previous address
    uint64_t last_len_ = 0;          // its bytes in the file
    // The section holding addr and its bytes in the file (last_ when it is).
    const Section* section(uint64_t addr, uint64_t& len);
};

}  // namespace probekit::elf
