#include "trace/ring_buffer.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace probekit::trace {

RingBuffer::RingBuffer(RingBuffer&& o) noexcept
    : fd_(o.fd_), base_(o.base_), map_size_(o.map_size_), data_size_(o.data_size_), scratch_(std::move(o.scratch_)) {
    o.base_ = nullptr;
    o.fd_ = -1;
}

RingBuffer::~RingBuffer() {
    if (base_) ::munmap(base_, map_size_);
}

bool RingBuffer::map(int fd, size_t data_pages, std::string& error) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    map_size_ = (1 + data_pages) * page;
    void* p = ::mmap(nullptr, map_size_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        error = std::string("mmap of the perf ring buffer (") + std::to_string(map_size_ / 1024) +
                " KiB): " + std::strerror(errno);
        if (errno == EPERM) error += " (over kernel.perf_event_mlock_kb without CAP_IPC_LOCK: use a smaller --buffer-pages)";
        return false;
    }
    base_ = p;
    fd_ = fd;
    data_size_ = data_pages * page;
    return true;
}

size_t RingBuffer::drain(const std::function<void(const perf_event_header&, std::span<const unsigned char>)>& fn) {
    if (!base_) return 0;
    auto* meta = static_cast<perf_event_mmap_page*>(base_);
    auto* data = static_cast<unsigned char*>(base_) + meta->data_offset;
    const uint64_t size = meta->data_size ? meta->data_size : data_size_;
    // Acquire pairs with the kernel's store of data_head: the records
    // before it are complete.
    const uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
    uint64_t tail = meta->data_tail;
    size_t n = 0;
    while (tail + sizeof(perf_event_header) <= head) {
        perf_event_header h;
        const uint64_t at = tail % size;
        if (at + sizeof h <= size) {
            std::memcpy(&h, data + at, sizeof h);
        } else {
            const size_t first = static_cast<size_t>(size - at);
            std::memcpy(&h, data + at, first);
            std::memcpy(reinterpret_cast<char*>(&h) + first, data, sizeof h - first);
        }
        if (h.size < sizeof h || tail + h.size > head) break;
        std::span<const unsigned char> rec;
        if (at + h.size <= size) {
            rec = {data + at, h.size};
        } else {
            scratch_.resize(h.size);
            const size_t first = static_cast<size_t>(size - at);
            std::memcpy(scratch_.data(), data + at, first);
            std::memcpy(scratch_.data() + first, data, h.size - first);
            rec = {scratch_.data(), h.size};
        }
        fn(h, rec);
        tail += h.size;
        ++n;
    }
    // Release: our reads of the records happen before the kernel may reuse
    // their space.
    __atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
    return n;
}

}  // namespace probekit::trace
