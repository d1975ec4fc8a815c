// Diagnostics for spec files: every message names file:line:col, as compilers do,
// so editors and build logs can jump to the offending place.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace probekit::spec {

// A file name shared by every location in that file: a spec has tens of
// thousands of tokens and AST nodes, and a long path copied into each was a
// large part of the time to load it.
class FileName {
public:
    FileName() = default;
    FileName(std::string name) : name_(std::make_shared<const std::string>(std::move(name))) {}
    FileName(const char* name) : FileName(std::string(name)) {}
    const std::string& str() const { return name_ ? *name_ : kNone; }
    operator const std::string&() const { return str(); }
    bool empty() const { return str().empty(); }
    friend bool operator==(const FileName& a, std::string_view b) { return a.str() == b; }

private:
    static inline const std::string kNone;
    std::shared_ptr<const std::string> name_;
};

struct Location {
    FileName file;
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
