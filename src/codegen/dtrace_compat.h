// Output of `probekit-dtrace`, the drop-in for SystemTap's `dtrace` script:
// the same macro names, semaphore declarations and sys/sdt.h markers, so code
// written against SystemTap's headers compiles and behaves unchanged.
#pragma once

#include <string>

#include "spec/ast.h"

namespace probekit::codegen {

// `dtrace -h`: the header. One deliberate difference: PROVIDER_PROBE_ENABLED()
// reads the semaphore through a volatile access, so a loop that tests it sees
// a tracer that attaches later (SystemTap's plain read can be hoisted).
std::string dtrace_header(const spec::Spec& spec);

// `dtrace -G`: the C source of the semaphore object, as SystemTap writes it.
std::string dtrace_semaphore_source(const spec::Spec& spec);

}  // namespace probekit::codegen
