// The parsed and checked form of a provider file: what every codegen backend reads.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "spec/diagnostics.h"

namespace probekit::spec {

// A type as written: `const char *`, `unsigned long long`, `struct conn *`, `Oid`.
struct TypeSpec {
    std::vector<std::string> words;  // specifier words in order, qualifiers included
    std::string tag;                 // for struct/union/enum: the tag (may be empty)
    int pointers = 0;                // number of '*'
    Location loc;
    std::string spelling() const;    // normalised: words, then " *" per pointer
};

// What a type means to a probe argument, after typedefs and #defines are followed.
enum class ArgKind {
    SignedInt,
    UnsignedInt,
    Char,     // plain char: its signedness is the target's
    Bool,
    Float,    // 4 bytes
    Double,   // 8 bytes
    Pointer,
    String,   // the `string` extension: NUL-terminated text behind a const char *
    Opaque,   // not known to probekit (an application typedef, a struct by value): untyped
};

struct ResolvedType {
    ArgKind kind = ArgKind::Opaque;
    // A C spelling that compiles with only system headers included, used in the
    // typed wrappers ("int", "uint16_t", "const void *"); empty for Opaque.
    std::string c_type;
    // The size on LP64 targets (informative; the marker measures the real one).
    int size = 0;
    std::string pointee;  // for Pointer: the pointed-to type as written
};

struct Arg {
    TypeSpec type;
    std::string name;  // as written; empty when the spec gives none
    ResolvedType resolved;
    Location loc;
};

struct Probe {
    std::string name;  // as written, `__` kept (`req__start`)
    std::vector<Arg> args;
    std::vector<Arg> translated;  // the D `: (...)` list: parsed, recorded, not used
    bool has_translated = false;
    std::string doc;  // from a /** ... */ comment right before it, cleaned up
    Location loc;
};

struct Pragma {
    std::string text;  // after "pragma"
    Location loc;
};

struct Provider {
    std::string name;
    std::vector<Probe> probes;
    Location loc;
};

struct Spec {
    std::string path;
    std::vector<Provider> providers;
    std::vector<Pragma> pragmas;  // every `#pragma D ...` line, in order
};

std::string kind_name(ArgKind k);

}  // namespace probekit::spec
