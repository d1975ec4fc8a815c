// How a generated header places one probe site. The header generator knows
// probes, types, gates and forms; a backend knows only what text places a
// site, so the marker can change without touching the generator.
#pragma once

#include <string>
#include <vector>

namespace probekit::codegen {

struct SiteArg {
    std::string value;  // a C expression: an integer or pointer of at most 8 bytes
    std::string size;   // its sdt size, -N signed or N unsigned: see Site::literal_sizes
};

struct Site {
    std::string provider;
    std::string probe;
    bool reached_by_call = false;  // the site is in an out-of-line function (5-byte NOP is safe)
    // Sizes are integer literals (or macros that expand to one) known when
    // the header is generated, rather than constant expressions the compiler
    // evaluates: typed arguments, whose converted type the spec fixes.
    bool literal_sizes = false;
    std::vector<SiteArg> args;
};

class MarkerBackend {
public:
    virtual ~MarkerBackend() = default;
    // Text emitted once, before any site (definitions, includes).
    virtual std::string prelude() const = 0;
    // A C statement (no trailing ';') that places the site.
    virtual std::string site(const Site& s) const = 0;
    // Whether the backend writes .note.probekit (the generator then emits the
    // metadata macros).
    virtual bool writes_metadata() const = 0;
    // Distinguishes the backends' shared per-arity macros in the header, so
    // that headers made with different backends can meet in one unit.
    virtual const char* tag() const = 0;
};

// probekit's own marker (include/probekit/marker.h, embedded in the header):
// compact asm, 5-byte NOPs at call-reached sites, .note.probekit. Falls back
// to <sys/sdt.h> on architectures other than x86-64.
class NativeMarker final : public MarkerBackend {
public:
    std::string prelude() const override;
    std::string site(const Site& s) const override;
    bool writes_metadata() const override { return true; }
    const char* tag() const override { return "N"; }
};

// <sys/sdt.h> STAP_PROBEn with semaphores: exactly SystemTap's sites. Kept as
// the reference that tests compare probekit's marker against.
class SysSdtMarker final : public MarkerBackend {
public:
    std::string prelude() const override;
    std::string site(const Site& s) const override;
    bool writes_metadata() const override { return false; }
    const char* tag() const override { return "S"; }
};

}  // namespace probekit::codegen
