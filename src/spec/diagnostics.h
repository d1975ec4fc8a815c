// Diagnostics for spec files: every message names file:line:col, as compilers do,
// so editors and build logs can jump to the offending place.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace probekit::spec {

struct Location {
    std::string file;
    uint32_t line = 0;
    uint32_t col = 0;
};

enum class Severity { Warning, Error };

struct Diagnostic {
    Severity severity;
    Location loc;
    std::string message;
    std::string format() const;  // "file:line:col: error: message"
};

class Diagnostics {
public:
    void error(const Location& loc, std::string message);
    void warning(const Location& loc, std::string message);
    // Promotes every warning to an error (the compilers' -Werror).
    void set_warnings_are_errors(bool on) { werror_ = on; }

    bool has_errors() const { return errors_ > 0; }
    size_t error_count() const { return errors_; }
    const std::vector<Diagnostic>& all() const { return list_; }
    std::string format_all() const;

private:
    std::vector<Diagnostic> list_;
    size_t errors_ = 0;
    bool werror_ = false;
};

// Thrown to abandon parsing after a syntax error has been recorded; the
// message is already in Diagnostics, so this carries nothing.
struct ParseAbort {};

}  // namespace probekit::spec
