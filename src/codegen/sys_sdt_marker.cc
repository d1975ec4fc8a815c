#include "codegen/marker_backend.h"

namespace probekit::codegen {

std::string SysSdtMarker::prelude() const {
    return "#ifndef _SDT_HAS_SEMAPHORES\n#define _SDT_HAS_SEMAPHORES 1\n#endif\n#include <sys/sdt.h>\n";
}

std::string SysSdtMarker::site(const Site& s) const {
    std::string out = s.args.empty() ? "STAP_PROBE(" : "STAP_PROBE" + std::to_string(s.args.size()) + "(";
    out += s.provider + ", " + s.probe;
    for (const auto& a : s.args) out += ", " + a.value;
    return out + ")";
}

}  // namespace probekit::codegen
