// Resolution of argument types: C builtins, fixed-width and system typedefs,
// typedef/#define aliases declared in the spec, and the `string` extension.
#pragma once

#include <map>
#include <string>

#include "spec/ast.h"
#include "spec/diagnostics.h"

namespace probekit::spec {

// Names declared by `typedef` or by an object-like `#define` whose body is a type.
using AliasTable = std::map<std::string, TypeSpec>;

// Words that make up builtin C types (plus D's `string`); an identifier that is
// not one of these and appears first in a type is a typedef name.
bool is_builtin_type_word(const std::string& w);
bool is_qualifier_word(const std::string& w);

// Resolves `t`. Invalid spellings (`unsigned double`, `void` by value) are
// errors; names probekit cannot know (application typedefs used by value,
// structs by value) resolve to ArgKind::Opaque with a warning.
ResolvedType resolve_type(const TypeSpec& t, const AliasTable& aliases, Diagnostics& diags);

}  // namespace probekit::spec
