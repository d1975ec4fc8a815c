#include "elf/note_reader.h"

#include <algorithm>

namespace probekit::elf {
namespace {

constexpr size_t kWindow = 64 * 1024;

uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) & ~(a - 1); }

}  // namespace

NoteReader::NoteReader(const ElfObject& object, const Section& section)
    : object_(object),
      file_off_(section.offset),
      size_(section.type == SHT_NOBITS ? 0 : section.size),
      // As libelf: 8-byte-aligned note sections pad to 8 (ELF_T_NHDR8), others to 4.
      align_(section.align == 8 ? 8 : 4) {}

uint32_t NoteReader::u32(const char* p) const {
    const auto* b = reinterpret_cast<const unsigned char*>(p);
    return object_.little_endian() ? b[0] | b[1] << 8 | b[2] << 16 | static_cast<uint32_t>(b[3]) << 24
                                   : b[3] | b[2] << 8 | b[1] << 16 | static_cast<uint32_t>(b[0]) << 24;
}

bool NoteReader::window(uint64_t off, uint64_t n) {
    if (off >= win_start_ && off - win_start_ <= win_len_ && n <= win_len_ - (off - win_start_)) return true;
    // Callers check that [off, off + n) is inside the section.
    const uint64_t len = std::min<uint64_t>(std::max<uint64_t>(n, kWindow), size_ - off);
    if (len > cap_) {
        buf_.reset(new char[len]);
        cap_ = len;
    }
    if (!object_.read_at(file_off_ + off, len, buf_.get())) {
        win_len_ = 0;
        return false;
    }
    win_start_ = off;
    win_len_ = len;
    return true;
}

bool NoteReader::next(Note& note) {
    if (malformed_ || pos_ >= size_) return false;
    malformed_ = true;  // until the entry proves whole
    if (size_ - pos_ < 12 || !window(pos_, 12)) return false;
    const char* h = buf_.get() + (pos_ - win_start_);
    const uint64_t namesz = u32(h), descsz = u32(h + 4);
    const uint32_t type = u32(h + 8);
    const uint64_t desc_off = align_up(12 + namesz, align_);
    const uint64_t end = desc_off + align_up(descsz, align_);  // 64-bit: no overflow from 32-bit sizes
    if (end > size_ - pos_ || !window(pos_, end)) return false;
    const char* e = buf_.get() + (pos_ - win_start_);
    note.type = type;
    note.owner = std::string_view(e + 12, namesz ? namesz - 1 : 0);
    note.desc = std::string_view(e + desc_off, descsz);
    pos_ += end;
    malformed_ = false;
    return true;
}

}  // namespace probekit::elf
