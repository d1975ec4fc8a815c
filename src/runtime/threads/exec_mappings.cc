#include "runtime/threads/exec_mappings.h"

#include <cerrno>
#include <fcntl.h>
#include <initializer_list>
#include <sys/ioctl.h>
#include <unistd.h>

namespace probekit::threads {
namespace {

// <linux/fs.h> of Linux 6.11 (struct procmap_query): declared here so the
// library builds against older headers and falls back at run time.
struct ProcmapQuery {
    uint64_t size;
    uint64_t query_flags;
    uint64_t query_addr;
    uint64_t vma_start;
    uint64_t vma_end;
    uint64_t vma_flags;
    uint64_t vma_page_size;
    uint64_t vma_offset;
    uint64_t inode;
    uint32_t dev_major;
    uint32_t dev_minor;
    uint32_t vma_name_size;
    uint32_t build_id_size;
    uint64_t vma_name_addr;
    uint64_t build_id_addr;
};
static_assert(sizeof(ProcmapQuery) == 104);
constexpr unsigned long kProcmapQuery = _IOWR('f', 17, ProcmapQuery);
constexpr uint64_t kExecutable = 0x04, kCoveringOrNext = 0x10, kFileBacked = 0x20;

void mix(uint64_t* h, uint64_t v) { *h = (*h ^ v) * 1099511628211ull; }

}  // namespace

bool exec_mappings_fingerprint(uint64_t* fingerprint) {
    const int fd = ::open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    uint64_t h = 1469598103934665603ull;
    uint64_t addr = 0;
    bool ok = true;
    for (;;) {
        ProcmapQuery q{};
        q.size = sizeof q;
        q.query_flags = kCoveringOrNext | kFileBacked | kExecutable;
        q.query_addr = addr;
        if (::ioctl(fd, kProcmapQuery, &q) != 0) {
            ok = errno == ENOENT;  // no mapping at or above addr: the walk is complete
            break;
        }
        for (uint64_t v : {q.vma_start, q.vma_end, q.vma_offset, q.inode,
                           (static_cast<uint64_t>(q.dev_major) << 32) | q.dev_minor})
            mix(&h, v);
        if (q.vma_end <= addr) {  // cannot happen; never loop forever
            ok = false;
            break;
        }
        addr = q.vma_end;
    }
    ::close(fd);
    *fingerprint = h;
    return ok;
}

}  // namespace probekit::threads
