#include "spec/names.h"

#include <cctype>

namespace probekit::spec {
namespace {

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
    for (size_t i = s.find(from); i != std::string::npos; i = s.find(from, i + to.size())) s.replace(i, from.size(), to);
    return s;
}

std::string upper(std::string s) {
    for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return s;
}

}  // namespace

std::string macro_name(const std::string& provider, const std::string& probe) {
    return upper(provider) + "_" + upper(replace_all(probe, "__", "_"));
}

std::string semaphore_name(const std::string& provider, const std::string& probe) {
    return provider + "_" + probe + "_semaphore";
}

std::string display_name(const std::string& probe) { return replace_all(probe, "__", "-"); }

std::string internal_name(const std::string& provider, const std::string& probe) {
    return "probekit_" + provider + "_" + probe;
}

std::string meta_macro_name(const std::string& provider, const std::string& probe) {
    return "PROBEKIT_META_" + provider + "_" + probe;
}

bool is_reserved_name(const std::string& name) {
    // The marker's and the helpers' names (include/probekit/marker.h and the
    // generated header's preamble). The runtime's own provider, `probekit`,
    // may use every other PROBEKIT_ name.
    static const char* const prefixes[] = {"PROBEKIT_SITE", "PROBEKIT_NOP", "PROBEKIT_ASM_", "PROBEKIT_META_",
                                           "PROBEKIT_GEN_", "PROBEKIT_ARGSIZE", "PROBEKIT_STR_", "PROBEKIT_SDT_", "PROBEKIT_ITYPE_", "PROBEKIT_NATIVE_MARKER",
                                           "PROBEKIT_MARKER_", "PROBEKIT_USE_SYS_SDT", "probekit_gen_v1"};
    if (name.rfind("PROBEKIT_", 0) != 0 && name.rfind("probekit_gen_v1", 0) != 0) return false;
    for (const char* p : prefixes)
        if (name.rfind(p, 0) == 0) return true;
    return false;
}

}  // namespace probekit::spec

namespace probekit::spec {

std::string arg_label(const std::string& name, std::size_t index) {
    return name.empty() ? "arg" + std::to_string(index + 1) : name;
}

std::string stap_alias_name(const std::string& provider, const std::string& probe) {
    return provider + "." + replace_all(probe, "__", "_");
}

}  // namespace probekit::spec
