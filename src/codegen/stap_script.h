// `probekit compile --format stap`: a SystemTap tapset with one probe alias
// per probe (`probe app.req_start = process("BIN").provider("app").mark(...)`)
// that binds every argument to a variable named after it and sets `argstr`.
#pragma once

#include <string>
#include <vector>

#include "codegen/script_common.h"
#include "spec/ast.h"

namespace probekit::codegen {

std::string stap_tapset(const spec::Spec& spec, const ScriptOptions& options);

// The alias's variable for each argument of `probe`: spec::arg_label, plus
// `_` when that is a SystemTap keyword or `argstr`, plus `_N` (N counting
// from 1) when an earlier argument already took the name.
std::vector<std::string> stap_variables(const spec::Probe& probe);

}  // namespace probekit::codegen
