#include "codegen/marker_backend.h"

namespace probekit::codegen {

std::string SysSdtMarker::prelude() const {
    return "#define _SDT_HAS_SEMAPHORES 1\n#include <sys/sdt.h>\n";
}

std::string SysSdtMarker::site(const std::string& provider, const std::string& probe,
                               const std::vector<std::string>& args) const {
    std::string out = args.empty() ? "STAP_PROBE(" : "STAP_PROBE" + std::to_string(args.size()) + "(";
    out += provider + ", " + probe;
    for (const auto& a : args) out += ", " + a;
    return out + ")";
}

}  // namespace probekit::codegen
