// Which probes an operator means: 'provider:name' shell globs, as `probekit
// list`, `enable` and `disable` take them.
#pragma once

#include <string_view>
#include <vector>
#include <string>

namespace probekit::spec {

// True when `provider`:`probe` matches any of `globs` (all probes when there
// are none). A glob without ':' matches the probe name in any provider. Names
// match as written (req__start) or as consumers show them (req-start).
bool matches_probe_glob(const std::vector<std::string>& globs, std::string_view provider, std::string_view probe);

}  // namespace probekit::spec
