#include "util/file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace probekit::util {
std::optional<std::string> read_file(const std::string& path, std::string& error) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        error = path + ": " + std::strerror(errno);
        return std::nullopt;
    }
    struct stat st {};
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        ::close(fd);
        error = path + ": is a directory";
        return std::nullopt;
    }
    std::string out;
    char buf[65536];
    for (;;) {
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            error = path + ": " + std::strerror(errno);
            ::close(fd);
            return std::nullopt;
        }
        if (n == 0) break;
        out.append(buf, static_cast<size_t>(n));
    }
    ::close(fd);
    return out;
}

bool write_file_atomic(const std::string& path, const std::string& content, std::string& error) {
    AtomicFile f;
    if (!f.open(path, error)) return false;
    f.write(content);
    return f.commit(error);
}

AtomicFile::~AtomicFile() { discard(); }

bool AtomicFile::open(const std::string& path, std::string& error) {
    path_ = path;
    if (path == "-") {
        fd_ = 1;
        return true;
    }
    tmp_ = path + ".tmpXXXXXX";
    fd_ = mkstemp(tmp_.data());
    if (fd_ < 0) {
        error = path + ": " + std::strerror(errno);
        tmp_.clear();
        return false;
    }
    fchmod(fd_, 0644 & ~[] { mode_t m = umask(0); umask(m); return m; }());
    return true;
}

void AtomicFile::write(std::string_view data) {
    if (fd_ < 0 || errno_ != 0) return;
    while (!data.empty()) {
        ssize_t n = ::write(fd_, data.data(), data.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            errno_ = n < 0 ? errno : EIO;
            return;
        }
        data.remove_prefix(static_cast<size_t>(n));
    }
}

bool AtomicFile::commit(std::string& error) {
    const std::string what = path_ == "-" ? "standard output" : path_;
    if (fd_ < 0) {
        error = what + ": not open";
        return false;
    }
    if (path_ == "-") {
        fd_ = -1;
        if (errno_ == 0) return true;
        error = what + ": " + std::strerror(errno_);
        return false;
    }
    if (::close(fd_) != 0 && errno_ == 0) errno_ = errno;
    fd_ = -1;
    if (errno_ == 0 && ::rename(tmp_.c_str(), path_.c_str()) != 0) errno_ = errno;
    if (errno_ != 0) {
        error = what + ": " + std::strerror(errno_);
        discard();
        return false;
    }
    tmp_.clear();
    return true;
}

void AtomicFile::discard() {
    if (fd_ > 1) ::close(fd_);
    fd_ = -1;
    if (!tmp_.empty()) ::unlink(tmp_.c_str());
    tmp_.clear();
}

}  // namespace probekit::util
