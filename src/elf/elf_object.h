// A read-only view of one ELF file through libelf's mmap mode: sections,
// program headers and bytes at link-time addresses, with every size and
// offset from the file checked before use (the file may be truncated,
// corrupted or hostile).
#pragma once

#include <gelf.h>
#include <libelf.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "elf/argspec.h"

namespace probekit::elf {

struct Section {
    std::string_view name;
    uint32_t type = 0;
    uint64_t flags = 0;
    uint64_t addr = 0;
    uint64_t offset = 0;
    uint64_t size = 0;
    uint64_t align = 0;
    Elf_Scn* scn = nullptr;
};

struct Segment {
    uint64_t vaddr = 0, offset = 0, filesz = 0, memsz = 0;
    uint32_t flags = 0;
};

class ElfObject {
public:
    // Opens `path`; on failure returns nullptr and sets `error` to a message
    // that names the file ("not an ELF file", "truncated section headers", ...).
    static std::unique_ptr<ElfObject> open(const std::string& path, std::string& error);
    // The same over bytes in memory (which must outlive the object): for the
    // fuzz target and for tests.
    static std::unique_ptr<ElfObject> from_memory(const char* data, size_t size, const std::string& name, std::string& error);
    ~ElfObject();
    ElfObject(const ElfObject&) = delete;
    ElfObject& operator=(const ElfObject&) = delete;

    const std::string& path() const { return path_; }
    Arch arch() const { return arch_; }
    bool is_64bit() const { return is64_; }
    bool little_endian() const { return little_; }
    uint16_t elf_type() const { return type_; }  // ET_EXEC, ET_DYN, ET_REL
    const std::vector<Section>& sections() const { return sections_; }
    size_t file_size() const { return image_size_; }
    const std::vector<Segment>& load_segments() const { return loads_; }
    const Section* section(std::string_view name) const;
    // The section's contents, or an empty view when it has none or lies
    // outside the file.
    std::string_view data(const Section& s) const;
    // Up to `n` bytes of file content at link-time address `addr` (through
    // the section that contains it); fewer when the address is not backed.
    std::string_view bytes_at(uint64_t addr, size_t n) const;
    // The allocated section with file content that holds link-time address
    // `addr` (the one bytes_at reads through), or null. Its contents lie
    // inside the file when data(*s) is not empty.
    const Section* section_at(uint64_t addr) const;
    // Link-time address -> file offset, through the PT_LOAD segment holding
    // it (what a uprobe's offset and ref_ctr_offset are), or nullopt.
    std::optional<uint64_t> file_offset(uint64_t addr) const {
        for (const auto& seg : loads_)
            if (addr >= seg.vaddr && addr - seg.vaddr < seg.filesz) return addr - seg.vaddr + seg.offset;
        return std::nullopt;
    }
    // Whether no two such sections overlap (every linked object): the
    // section holding an address is then the only one.
    bool sections_disjoint() const { return !by_addr_.empty(); }
    // Copies `n` bytes at file offset `offset` into `out`: with pread, so
    // that streaming through a large section does not leave all of it
    // mapped in (see NoteReader). False when the range is not in the file.
    bool read_at(uint64_t offset, size_t n, char* out) const;
    // The GNU build-id as hex, or empty. Looks only at allocated notes,
    // where linkers put it: not through megabytes of .note.stapsdt.
    std::string build_id() const;

private:
    ElfObject() = default;
    // Reads headers, sections and segments once elf_ is set.
    bool load(size_t file_size, std::string& error);
    std::string path_;
    int fd_ = -1;
    Elf* elf_ = nullptr;
    const char* image_ = nullptr;  // the whole file, as libelf mapped it
    size_t image_size_ = 0;
    Arch arch_ = Arch::Unknown;
    bool is64_ = true, little_ = true;
    uint16_t type_ = 0;
    std::vector<Section> sections_;
    std::vector<Segment> loads_;
    // The allocated sections with file content, by address, when none
    // overlap (every linked object): bytes_at's binary search, instead of a
    // scan per site. Empty otherwise (relocatable objects, where all start
    // at 0, and odd files): bytes_at then scans in header order.
    std::vector<const Section*> by_addr_;
};

}  // namespace probekit::elf
