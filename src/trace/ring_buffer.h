// One perf ring buffer (mmap of a perf event fd): the kernel writes
// records at data_head, we consume up to it and publish data_tail.
// Hand-written rather than through libperf/libbpf: the protocol is two
// atomics and a wrap-around copy, and neither library is in Debian 12 in a
// form the static probekit binary can link.
#pragma once

#include <linux/perf_event.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace probekit::trace {

class RingBuffer {
public:
    RingBuffer() = default;
    RingBuffer(RingBuffer&& o) noexcept;
    RingBuffer& operator=(RingBuffer&&) = delete;
    RingBuffer(const RingBuffer&) = delete;
    ~RingBuffer();

    // Maps 1 + `data_pages` pages (a power of two) of `fd`.
    bool map(int fd, size_t data_pages, std::string& error);
    int fd() const { return fd_; }

    // Hands every complete record to `fn` (header first; a record that
    // wraps around the end is copied out whole), then frees their space.
    size_t drain(const std::function<void(const perf_event_header&, std::span<const unsigned char>)>& fn);

private:
    int fd_ = -1;
    void* base_ = nullptr;
    size_t map_size_ = 0, data_size_ = 0;
    std::vector<unsigned char> scratch_;
};

}  // namespace probekit::trace
