// `probekit compile --format gdb`: a gdb script that puts a breakpoint on
// every probe (`break -probe-stap app:req__start`) whose commands print the
// arguments by name and continue.
#pragma once

#include <string>

#include "codegen/script_common.h"
#include "spec/ast.h"

namespace probekit::codegen {

std::string gdb_script(const spec::Spec& spec, const ScriptOptions& options);

}  // namespace probekit::codegen
