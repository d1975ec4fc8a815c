#include "elf/note_reader.h"

#include <algorithm>
#include <bit>
#include <cstring>

namespace probekit::elf {
namespace {

constexpr size_t kWindow = 32 * 1024;      // notes
constexpr uint64_t kCodeWindow = 16 * 1024; // code: 5 bytes per site
constexpr uint64_t kPage = 4096;

uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) & ~(a - 1); }

}  // namespace

NoteReader::NoteReader(const ElfObject& object, const Section& section)
    : object_(object),
      file_off_(section.offset),
      size_(section.type == SHT_NOBITS ? 0 : section.size),
      // As libelf: 8-byte-aligned note sections pad to 8 (ELF_T_NHDR8), others to 4.
      align_(section.align == 8 ? 8 : 4) {}

uint32_t NoteReader::u32(const char* p) const {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return object_.little_endian() == (std::endian::native == std::endian::little) ? v : __builtin_bswap32(v);
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

const Section* CodeReader::section(uint64_t addr, uint64_t& len) {
    // Consecutive sites are nearly always in one section (.text).
    if (!last_ || addr < last_->addr || addr - last_->addr >= last_->size || !object_.sections_disjoint()) {
        last_ = object_.section_at(addr);
        last_len_ = last_ ? object_.data(*last_).size() : 0;  // 0 when outside the file
    }
    len = last_len_;
    return last_;
}

bool CodeReader::backed(uint64_t addr) {
    uint64_t len = 0;
    const Section* s = section(addr, len);
    return s && addr - s->addr < len;
}

size_t CodeReader::read(uint64_t addr, size_t n, char* out) {
    uint64_t sec_len = 0;
    const Section* s = section(addr, sec_len);
    if (!s || n > 16) return 0;
    const uint64_t in_sec = addr - s->addr;
    if (in_sec >= sec_len) return 0;
    n = static_cast<size_t>(std::min<uint64_t>(n, sec_len - in_sec));
    const uint64_t off = s->offset + in_sec;  // [off, off + n) is in the file: data() checked the section
    if (!(off >= win_off_ && off - win_off_ <= win_len_ && n <= win_len_ - (off - win_off_))) {
        // Sequential (the next bytes follow the window): a larger window
        // next time; otherwise one page.
        const bool sequential = win_len_ && off >= win_off_ + win_len_ && off - (win_off_ + win_len_) < kPage;
        next_len_ = sequential ? std::min<uint64_t>(next_len_ * 2, kCodeWindow) : kPage;
        if (!buf_) buf_.reset(new char[kCodeWindow + 16]);
        // From the start of the page (but inside the section), at least n bytes.
        const uint64_t start = std::max(off & ~(kPage - 1), s->offset);
        const uint64_t end = s->offset + sec_len;
        const uint64_t len = std::min(std::max(next_len_, off - start + n), end - start);
        win_len_ = 0;
        if (!object_.read_at(start, static_cast<size_t>(len), buf_.get())) return 0;
        win_off_ = start;
        win_len_ = len;
    }
    std::memcpy(out, buf_.get() + (off - win_off_), n);
    return n;
}

}  // namespace probekit::elf
