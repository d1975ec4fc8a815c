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

}  // namespace probekit::spec
