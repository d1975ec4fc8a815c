// An append-only output buffer that writes straight into its storage and,
// when given a stream, hands full chunks to it.
//
// Why not std::string: `probekit list -v --format json` writes megabytes a
// few bytes at a time, and std::string's per-call capacity checks and
// out-of-line push_back cost more than formatting; holding the whole listing
// in memory would also cost more than the data it describes. With a stream,
// memory stays at one chunk however large the output.
#pragma once

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string_view>

namespace probekit::util {

class OutBuffer {
public:
    // `sink` null: keep everything (read it back with view()).
    explicit OutBuffer(std::FILE* sink = nullptr, size_t chunk = 64 * 1024) : sink_(sink) { grow_to(chunk); }
    ~OutBuffer() { flush(); }
    OutBuffer(const OutBuffer&) = delete;
    OutBuffer& operator=(const OutBuffer&) = delete;

    void put(char c) {
        if (p_ == end_) make_room(1);
        *p_++ = c;
    }
    void append(std::string_view s) { append(s.data(), s.size()); }
    void append(const char* s, size_t n) {
        if (static_cast<size_t>(end_ - p_) < n) make_room(n);
        std::memcpy(p_, s, n);
        p_ += n;
    }
    OutBuffer& operator+=(std::string_view s) {
        append(s);
        return *this;
    }
    OutBuffer& operator+=(char c) {
        put(c);
        return *this;
    }
    // Room for `n` bytes at the returned pointer; pass the end of what was
    // written to commit().
    char* reserve(size_t n) {
        if (static_cast<size_t>(end_ - p_) < n) make_room(n);
        return p_;
    }
    void commit(char* end) { p_ = end; }

    // Writes what is buffered to the sink (no-op without one).
    void flush() {
        if (!sink_ || p_ == buf_.get()) return;
        std::fwrite(buf_.get(), 1, static_cast<size_t>(p_ - buf_.get()), sink_);
        p_ = buf_.get();
    }
    // What is buffered (everything, without a sink).
    std::string_view view() const { return {buf_.get(), static_cast<size_t>(p_ - buf_.get())}; }
    size_t size() const { return static_cast<size_t>(p_ - buf_.get()); }
    // Drops what is buffered, unwritten.
    void clear() { p_ = buf_.get(); }

private:
    void make_room(size_t n) {
        flush();
        const size_t used = static_cast<size_t>(p_ - buf_.get()), cap = static_cast<size_t>(end_ - buf_.get());
        if (cap - used < n) grow_to(used + n > 2 * cap ? used + n : 2 * cap);
    }
    void grow_to(size_t cap) {
        const size_t used = static_cast<size_t>(p_ - buf_.get());
        std::unique_ptr<char[]> b(new char[cap]);
        if (used) std::memcpy(b.get(), buf_.get(), used);
        buf_ = std::move(b);
        p_ = buf_.get() + used;
        end_ = buf_.get() + cap;
    }

    std::FILE* sink_;
    std::unique_ptr<char[]> buf_;
    char* p_ = nullptr;
    char* end_ = nullptr;
};

}  // namespace probekit::util
