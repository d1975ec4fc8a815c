// The front door of the spec part: file (or text) in, checked Spec out.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "spec/ast.h"
#include "spec/diagnostics.h"

namespace probekit::spec {

struct LoadOptions {
    bool use_cpp = false;                 // run the C preprocessor first (-C)
    std::vector<std::string> cpp_flags;   // -I and -D flags passed through to it
    std::string cpp_command;              // default: $CPP, else "cpp"
};

// Parses and checks `text` as if read from `path`. Returns nullopt when any
// error was reported.
std::optional<Spec> load_text(const std::string& text, const std::string& path, Diagnostics& diags);

// Reads `path` (through cpp when options.use_cpp) and parses and checks it.
std::optional<Spec> load_file(const std::string& path, const LoadOptions& options, Diagnostics& diags);

}  // namespace probekit::spec
