// How a generated header places one probe site. The header generators know
// probes, types and gates; a backend knows only the asm of a site, so the
// sys/sdt.h backend can be replaced by probekit's own marker without touching
// them.
#pragma once

#include <string>
#include <vector>

namespace probekit::codegen {

class MarkerBackend {
public:
    virtual ~MarkerBackend() = default;
    // Preprocessor lines emitted once, before any site (includes, switches).
    virtual std::string prelude() const = 0;
    // A C statement (no trailing ';') that places a site of provider:probe
    // whose argument expressions are `args`; the semaphore symbol is
    // `<provider>_<probe>_semaphore`.
    virtual std::string site(const std::string& provider, const std::string& probe,
                             const std::vector<std::string>& args) const = 0;
};

// Sites through <sys/sdt.h> STAP_PROBEn with semaphores: byte-for-byte what
// SystemTap's own headers produce.
class SysSdtMarker final : public MarkerBackend {
public:
    std::string prelude() const override;
    std::string site(const std::string& provider, const std::string& probe,
                     const std::vector<std::string>& args) const override;
};

}  // namespace probekit::codegen
