// `probekit compile --format json`: every provider, probe and argument with
// its resolved type, for scripts and other tools.
#pragma once

#include <string>

#include "spec/ast.h"

namespace probekit::codegen {

std::string json_manifest(const spec::Spec& spec);

}  // namespace probekit::codegen
