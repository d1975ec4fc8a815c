// Helpers shared by the spec unit tests.
#pragma once

#include <optional>
#include <string>

#include "spec/load.h"

namespace probekit::test {

struct Loaded {
    std::optional<spec::Spec> spec;
    spec::Diagnostics diags;
    std::string messages() const { return diags.format_all(); }
};

inline Loaded load(const std::string& text, const std::string& path = "t.d") {
    Loaded l;
    l.spec = spec::load_text(text, path, l.diags);
    return l;
}

}  // namespace probekit::test
