#include "elf/elf_object.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace probekit::elf {
namespace {

bool libelf_ready() {
    static const bool ok = elf_version(EV_CURRENT) != EV_NONE;
    return ok;
}

std::string hex(std::string_view bytes) {
    static const char digits[] = "0123456789abcdef";
    std::string out;
    out.reserve(bytes.size() * 2);
    for (unsigned char c : bytes) {
        out += digits[c >> 4];
        out += digits[c & 15];
    }
    return out;
}

}  // namespace

std::unique_ptr<ElfObject> ElfObject::open(const std::string& path, std::string& error) {
    if (!libelf_ready()) {
        error = "libelf is out of date";
        return nullptr;
    }
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        error = std::strerror(errno);
        return nullptr;
    }
    struct stat st {};
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        error = S_ISDIR(st.st_mode) ? "is a directory" : "not a regular file";
        ::close(fd);
        return nullptr;
    }
    std::unique_ptr<ElfObject> o(new ElfObject());
    o->path_ = path;
    o->fd_ = fd;
    o->elf_ = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
    if (!o->load(static_cast<size_t>(st.st_size), error)) return nullptr;
    return o;
}

std::unique_ptr<ElfObject> ElfObject::from_memory(const char* data, size_t size, const std::string& name, std::string& error) {
    if (!libelf_ready()) {
        error = "libelf is out of date";
        return nullptr;
    }
    std::unique_ptr<ElfObject> o(new ElfObject());
    o->path_ = name;
    // libelf does not write through this pointer in read mode.
    o->elf_ = elf_memory(const_cast<char*>(data), size);
    if (!o->load(size, error)) return nullptr;
    return o;
}

bool ElfObject::load(size_t file_size, std::string& error) {
    if (!elf_ || elf_kind(elf_) != ELF_K_ELF) {
        error = file_size < 16 ? "not an ELF file (too short)" : "not an ELF file";
        return false;
    }
    image_ = elf_rawfile(elf_, &image_size_);
    GElf_Ehdr eh;
    if (!gelf_getehdr(elf_, &eh)) {
        error = std::string("corrupt ELF header: ") + elf_errmsg(-1);
        return false;
    }
    is64_ = eh.e_ident[EI_CLASS] == ELFCLASS64;
    little_ = eh.e_ident[EI_DATA] == ELFDATA2LSB;
    type_ = eh.e_type;
    arch_ = arch_from_elf(eh.e_machine, is64_);

    size_t shstrndx = 0;
    if (elf_getshdrstrndx(elf_, &shstrndx) != 0) {
        error = std::string("corrupt section headers: ") + elf_errmsg(-1);
        return false;
    }
    for (Elf_Scn* scn = elf_nextscn(elf_, nullptr); scn; scn = elf_nextscn(elf_, scn)) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh)) {
            error = std::string("corrupt section header: ") + elf_errmsg(-1);
            return false;
        }
        const char* name = elf_strptr(elf_, shstrndx, sh.sh_name);
        sections_.push_back({name ? std::string_view(name) : std::string_view(), sh.sh_type, sh.sh_flags, sh.sh_addr,
                             sh.sh_offset, sh.sh_size, sh.sh_addralign, scn});
    }
    size_t nph = 0;
    if (elf_getphdrnum(elf_, &nph) == 0) {
        for (size_t i = 0; i < nph; ++i) {
            GElf_Phdr ph;
            if (gelf_getphdr(elf_, static_cast<int>(i), &ph) && ph.p_type == PT_LOAD)
                loads_.push_back({ph.p_vaddr, ph.p_offset, ph.p_filesz, ph.p_memsz, ph.p_flags});
        }
    }
    for (const auto& s : sections_)
        if ((s.flags & SHF_ALLOC) && s.type != SHT_NOBITS && s.size) by_addr_.push_back(&s);
    std::stable_sort(by_addr_.begin(), by_addr_.end(), [](const Section* a, const Section* b) { return a->addr < b->addr; });
    for (size_t i = 1; i < by_addr_.size(); ++i)
        if (by_addr_[i]->addr - by_addr_[i - 1]->addr < by_addr_[i - 1]->size) {
            by_addr_.clear();
            break;
        }
    return true;
}

ElfObject::~ElfObject() {
    if (elf_) elf_end(elf_);
    if (fd_ >= 0) ::close(fd_);
}

const Section* ElfObject::section(std::string_view name) const {
    for (const auto& s : sections_)
        if (s.name == name) return &s;
    return nullptr;
}

std::string_view ElfObject::data(const Section& s) const {
    if (s.type == SHT_NOBITS || !image_) return {};
    if (s.offset > image_size_ || s.size > image_size_ - s.offset) return {};
    return {image_ + s.offset, static_cast<size_t>(s.size)};
}

const Section* ElfObject::section_at(uint64_t addr) const {
    if (!by_addr_.empty()) {
        auto it = std::upper_bound(by_addr_.begin(), by_addr_.end(), addr, [](uint64_t a, const Section* s) { return a < s->addr; });
        if (it == by_addr_.begin()) return nullptr;
        const Section& s = **--it;
        return addr - s.addr < s.size ? &s : nullptr;
    }
    for (const auto& s : sections_) {
        if (!(s.flags & SHF_ALLOC) || s.type == SHT_NOBITS) continue;
        if (addr >= s.addr && addr - s.addr < s.size) return &s;
    }
    return nullptr;
}

std::string_view ElfObject::bytes_at(uint64_t addr, size_t n) const {
    const Section* s = section_at(addr);
    if (!s) return {};
    std::string_view d = data(*s);
    const uint64_t off = addr - s->addr;
    if (off >= d.size()) return {};
    return d.substr(static_cast<size_t>(off), n);
}

bool ElfObject::read_at(uint64_t offset, size_t n, char* out) const {
    if (!image_ || offset > image_size_ || n > image_size_ - offset) return false;
    if (fd_ < 0) {  // from_memory: the bytes are already in memory
        std::memcpy(out, image_ + offset, n);
        return true;
    }
    while (n > 0) {
        const ssize_t r = ::pread(fd_, out, n, static_cast<off_t>(offset));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;  // shrunk since it was opened
        out += r;
        offset += static_cast<uint64_t>(r);
        n -= static_cast<size_t>(r);
    }
    return true;
}

std::string ElfObject::build_id() const {
    for (const auto& s : sections_) {
        if (s.type != SHT_NOTE || !(s.flags & SHF_ALLOC)) continue;
        Elf_Data* d = elf_getdata(s.scn, nullptr);
        if (!d) continue;
        GElf_Nhdr nh;
        size_t off = 0, name_off = 0, desc_off = 0;
        while ((off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
            if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
                std::memcmp(static_cast<const char*>(d->d_buf) + name_off, "GNU", 4) == 0)
                return hex({static_cast<const char*>(d->d_buf) + desc_off, nh.n_descsz});
        }
    }
    return {};
}

}  // namespace probekit::elf
