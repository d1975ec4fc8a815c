// `probekit compile`'s header: typed C and C++ probe macros, gates, and the
// semaphores themselves (weak and hidden, one per probe per linked object).
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "codegen/marker_backend.h"
#include "spec/ast.h"

namespace probekit::codegen {

struct HeaderOptions {
    std::string guard;        // include guard macro; derived from the spec path when empty
    std::string source_name;  // shown in the "generated from" comment
};

std::string native_header(const spec::Spec& spec, const MarkerBackend& marker, const HeaderOptions& options);
// The same text, handed to `sink` in chunks as it is made.
void write_native_header(const spec::Spec& spec, const MarkerBackend& marker, const HeaderOptions& options,
                         const std::function<void(std::string_view)>& sink);

// An include guard made from a file name: "probes/app.h" -> "PROBEKIT_included_app_h_guard".
std::string guard_from_path(const std::string& path);

}  // namespace probekit::codegen
