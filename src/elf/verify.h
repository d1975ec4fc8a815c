// `probekit verify`: lint rules over the probes of one binary, optionally
// against the spec it was built from.
#pragma once

#include <string>
#include <vector>

#include "elf/probes.h"
#include "spec/ast.h"

namespace probekit::elf {

enum class Severity { Warning, Error };

struct Finding {
    Severity severity;
    std::string rule;     // short id: "operand", "signature", "semaphore", "metadata", "spec-missing", ...
    std::string probe;    // "provider:name", or empty
    std::string message;
};

// Checks `set` (and, when `spec` is given, that the binary holds exactly the
// spec's probes for the spec's providers).
std::vector<Finding> verify(const ProbeSet& set, const spec::Spec* spec);

}  // namespace probekit::elf
