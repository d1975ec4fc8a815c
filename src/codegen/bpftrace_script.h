// `probekit compile --format bpftrace`: a bpftrace script that prints every
// probe with its arguments named and typed (`app:req__start fd=3 path=/x`).
#pragma once

#include <string>

#include "codegen/script_common.h"
#include "spec/ast.h"

namespace probekit::codegen {

// bpftrace 0.17 reads USDT arguments arg0..arg5 only on x86-64 ("doesn't
// support arg6"): later arguments are left out, and the script says so.
inline constexpr size_t kBpftraceMaxArgs = 6;

std::string bpftrace_script(const spec::Spec& spec, const ScriptOptions& options);

}  // namespace probekit::codegen
