// Semantic checks over a parsed spec, and type resolution of every argument.
#pragma once

#include "spec/ast.h"
#include "spec/diagnostics.h"
#include "spec/types.h"

namespace probekit::spec {

// sys/sdt.h stops at STAP_PROBE12 and libbpf's USDT consumer reads 12.
inline constexpr size_t kMaxProbeArgs = 12;

// Resolves every argument type in place and reports duplicates, too many
// arguments, and names that would collide in generated code.
void check(Spec& spec, const AliasTable& aliases, Diagnostics& diags);

}  // namespace probekit::spec
