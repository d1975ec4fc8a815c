#include "codegen/marker_backend.h"

// The texts of include/probekit/marker.h and runtime_abi.h, embedded at build time.
extern const char probekit_marker_h[];
extern const char probekit_runtime_abi_h[];

namespace probekit::codegen {

std::string NativeMarker::prelude() const { return std::string(probekit_marker_h) + probekit_runtime_abi_h; }

std::string NativeMarker::site(const Site& s) const {
    std::string out = "PROBEKIT_SITE" + std::to_string(s.args.size()) + (s.literal_sizes ? "(" : "_EXPR(");
    out += s.reached_by_call ? "PROBEKIT_NOP5" : "PROBEKIT_NOP1";
    out += ", " + s.provider + ", " + s.probe;
    for (const auto& a : s.args) out += ", " + a.value + ", " + a.size;
    return out + ")";
}

}  // namespace probekit::codegen
