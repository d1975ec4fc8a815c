#include "spec/probe_glob.h"

#include <fnmatch.h>

#include "spec/names.h"

namespace probekit::spec {

bool matches_probe_glob(const std::vector<std::string>& globs, std::string_view provider, std::string_view probe) {
    if (globs.empty()) return true;
    const std::string prov(provider), name(probe), shown = display_name(name);
    for (const auto& g : globs) {
        const auto colon = g.find(':');
        const std::string gp = colon == std::string::npos ? "*" : g.substr(0, colon);
        const std::string gn = colon == std::string::npos ? g : g.substr(colon + 1);
        if (fnmatch(gp.c_str(), prov.c_str(), 0) == 0 &&
            (fnmatch(gn.c_str(), name.c_str(), 0) == 0 || fnmatch(gn.c_str(), shown.c_str(), 0) == 0))
            return true;
    }
    return false;
}

}  // namespace probekit::spec
