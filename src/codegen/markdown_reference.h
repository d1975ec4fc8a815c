// `probekit compile --format markdown`: a reference page of every probe (its
// doc comment, declaration, argument table and how each consumer names it)
// for a project's documentation.
#pragma once

#include <string>

#include "codegen/script_common.h"
#include "spec/ast.h"

namespace probekit::codegen {

std::string markdown_reference(const spec::Spec& spec, const ScriptOptions& options);

}  // namespace probekit::codegen
