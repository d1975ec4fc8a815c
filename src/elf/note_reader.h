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

}  // namespace probekit::elf
