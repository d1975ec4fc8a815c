#include "spec/ast.h"

namespace probekit::spec {

std::string TypeSpec::spelling() const {
    std::string out;
    for (const auto& w : words) {
        if (!out.empty()) out += ' ';
        out += w;
    }
    if (!tag.empty()) out += (out.empty() ? "" : " ") + tag;
    if (pointers > 0) {
        out += ' ';
        out.append(static_cast<size_t>(pointers), '*');
    }
    return out;
}

std::string kind_name(ArgKind k) {
    switch (k) {
        case ArgKind::SignedInt: return "signed";
        case ArgKind::UnsignedInt: return "unsigned";
        case ArgKind::Char: return "char";
        case ArgKind::Bool: return "bool";
        case ArgKind::Float: return "float";
        case ArgKind::Double: return "double";
        case ArgKind::Pointer: return "pointer";
        case ArgKind::String: return "string";
        case ArgKind::Opaque: return "opaque";
    }
    return "opaque";
}

}  // namespace probekit::spec
