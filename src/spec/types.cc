#include "spec/types.h"

#include <algorithm>
#include <array>

namespace probekit::spec {
namespace {

struct KnownTypedef {
    const char* name;
    ArgKind kind;
    int size;
    const char* c_type;
};

// Typedefs that occur in real provider files. Linux ones keep their own name
// (the header includes <stdint.h>, <stddef.h> and <sys/types.h>, so the width
// is the target's); Solaris-only ones map to the type they stand for there.
constexpr std::array<KnownTypedef, 47> kKnownTypedefs{{
    {"int8_t", ArgKind::SignedInt, 1, "int8_t"},
    {"int16_t", ArgKind::SignedInt, 2, "int16_t"},
    {"int32_t", ArgKind::SignedInt, 4, "int32_t"},
    {"int64_t", ArgKind::SignedInt, 8, "int64_t"},
    {"uint8_t", ArgKind::UnsignedInt, 1, "uint8_t"},
    {"uint16_t", ArgKind::UnsignedInt, 2, "uint16_t"},
    {"uint32_t", ArgKind::UnsignedInt, 4, "uint32_t"},
    {"uint64_t", ArgKind::UnsignedInt, 8, "uint64_t"},
    {"intptr_t", ArgKind::SignedInt, 8, "intptr_t"},
    {"uintptr_t", ArgKind::UnsignedInt, 8, "uintptr_t"},
    {"intmax_t", ArgKind::SignedInt, 8, "intmax_t"},
    {"uintmax_t", ArgKind::UnsignedInt, 8, "uintmax_t"},
    {"size_t", ArgKind::UnsignedInt, 8, "size_t"},
    {"ssize_t", ArgKind::SignedInt, 8, "ssize_t"},
    {"ptrdiff_t", ArgKind::SignedInt, 8, "ptrdiff_t"},
    {"off_t", ArgKind::SignedInt, 8, "off_t"},
    {"off64_t", ArgKind::SignedInt, 8, "int64_t"},
    {"pid_t", ArgKind::SignedInt, 4, "pid_t"},
    {"uid_t", ArgKind::UnsignedInt, 4, "uid_t"},
    {"gid_t", ArgKind::UnsignedInt, 4, "gid_t"},
    {"id_t", ArgKind::UnsignedInt, 4, "id_t"},
    {"mode_t", ArgKind::UnsignedInt, 4, "mode_t"},
    {"dev_t", ArgKind::UnsignedInt, 8, "dev_t"},
    {"ino_t", ArgKind::UnsignedInt, 8, "ino_t"},
    {"time_t", ArgKind::SignedInt, 8, "time_t"},
    {"socklen_t", ArgKind::UnsignedInt, 4, "socklen_t"},
    {"clockid_t", ArgKind::SignedInt, 4, "clockid_t"},
    {"u_char", ArgKind::UnsignedInt, 1, "unsigned char"},
    {"u_short", ArgKind::UnsignedInt, 2, "unsigned short"},
    {"u_int", ArgKind::UnsignedInt, 4, "unsigned int"},
    {"u_long", ArgKind::UnsignedInt, 8, "unsigned long"},
    {"u_int8_t", ArgKind::UnsignedInt, 1, "uint8_t"},
    {"u_int16_t", ArgKind::UnsignedInt, 2, "uint16_t"},
    {"u_int32_t", ArgKind::UnsignedInt, 4, "uint32_t"},
    {"u_int64_t", ArgKind::UnsignedInt, 8, "uint64_t"},
    // Solaris / illumos, where DTrace comes from.
    {"zoneid_t", ArgKind::SignedInt, 4, "int"},
    {"processorid_t", ArgKind::SignedInt, 4, "int"},
    {"offset_t", ArgKind::SignedInt, 8, "long long"},
    {"longlong_t", ArgKind::SignedInt, 8, "long long"},
    {"u_longlong_t", ArgKind::UnsignedInt, 8, "unsigned long long"},
    {"hrtime_t", ArgKind::SignedInt, 8, "long long"},
    {"boolean_t", ArgKind::SignedInt, 4, "int"},
    {"uchar_t", ArgKind::UnsignedInt, 1, "unsigned char"},
    {"ushort_t", ArgKind::UnsignedInt, 2, "unsigned short"},
    {"uint_t", ArgKind::UnsignedInt, 4, "unsigned int"},
    {"ulong_t", ArgKind::UnsignedInt, 8, "unsigned long"},
    {"caddr_t", ArgKind::Pointer, 8, "const void *"},
}};

constexpr int kMaxAliasDepth = 32;

ResolvedType pointer_to(const std::string& pointee) {
    return {ArgKind::Pointer, "const void *", 8, pointee};
}

std::string join(const std::vector<std::string>& words) {
    std::string out;
    for (const auto& w : words) out += (out.empty() ? "" : " ") + w;
    return out;
}

ResolvedType invalid(const TypeSpec& t, Diagnostics& diags, const std::string& why) {
    diags.error(t.loc, why);
    return {};
}

// Builtin words without qualifiers: `unsigned long long`, `char`, `string`...
ResolvedType resolve_builtin(const TypeSpec& t, const std::vector<std::string>& w, Diagnostics& diags) {
    int n_signed = 0, n_unsigned = 0, n_short = 0, n_long = 0, n_int = 0, n_char = 0, n_other = 0;
    std::string other;
    for (const auto& x : w) {
        if (x == "signed") ++n_signed;
        else if (x == "unsigned") ++n_unsigned;
        else if (x == "short") ++n_short;
        else if (x == "long") ++n_long;
        else if (x == "int") ++n_int;
        else if (x == "char") ++n_char;
        else { ++n_other; other = x; }
    }
    const std::string spelled = join(w);
    auto bad = [&] { return invalid(t, diags, "'" + spelled + "' is not a valid type"); };
    if (n_signed + n_unsigned > 1 || n_short > 1 || n_long > 2 || n_int > 1 || n_char > 1) return bad();
    if (n_other > 0) {
        if (w.size() == 2 && n_long == 1 && other == "double")
            return invalid(t, diags, "'long double' is wider than 8 bytes and cannot be a probe argument");
        if (w.size() != 1) return bad();
        if (t.pointers > 0) {
            if (other == "string") return invalid(t, diags, "'string' is already a pointer to text; '" + t.spelling() + "' is not a valid type");
            return pointer_to(other);
        }
        if (other == "void") return invalid(t, diags, "'void' cannot be the type of an argument (use 'void *', or '()' for no arguments)");
        if (other == "string") return {ArgKind::String, "const char *", 8, ""};
        if (other == "bool" || other == "_Bool") return {ArgKind::Bool, "_Bool", 1, ""};
        if (other == "float") return {ArgKind::Float, "float", 4, ""};
        if (other == "double") return {ArgKind::Double, "double", 8, ""};
        return bad();
    }
    if (n_char && (n_short || n_long || n_int)) return bad();
    if (n_short && n_long) return bad();
    bool is_unsigned = n_unsigned > 0;
    ResolvedType r;
    if (n_char) {
        r = n_signed ? ResolvedType{ArgKind::SignedInt, "signed char", 1, ""}
            : is_unsigned ? ResolvedType{ArgKind::UnsignedInt, "unsigned char", 1, ""}
                          : ResolvedType{ArgKind::Char, "char", 1, ""};
    } else if (n_short) {
        r = {is_unsigned ? ArgKind::UnsignedInt : ArgKind::SignedInt, is_unsigned ? "unsigned short" : "short", 2, ""};
    } else if (n_long == 2) {
        r = {is_unsigned ? ArgKind::UnsignedInt : ArgKind::SignedInt, is_unsigned ? "unsigned long long" : "long long", 8, ""};
    } else if (n_long == 1) {
        r = {is_unsigned ? ArgKind::UnsignedInt : ArgKind::SignedInt, is_unsigned ? "unsigned long" : "long", 8, ""};
    } else {
        r = {is_unsigned ? ArgKind::UnsignedInt : ArgKind::SignedInt, is_unsigned ? "unsigned int" : "int", 4, ""};
    }
    if (t.pointers > 0) return pointer_to(r.c_type);
    return r;
}

ResolvedType resolve_at(const TypeSpec& t, const AliasTable& aliases, Diagnostics& diags, int depth) {
    if (depth > kMaxAliasDepth) return invalid(t, diags, "type aliases nest too deeply (a #define or typedef refers to itself?)");
    std::vector<std::string> w;
    for (const auto& x : t.words)
        if (!is_qualifier_word(x)) w.push_back(x);

    bool aggregate = !w.empty() && (w[0] == "struct" || w[0] == "union" || w[0] == "enum");
    if (aggregate) {
        if (w.size() != 1) return invalid(t, diags, "'" + t.spelling() + "' is not a valid type");
        std::string spelled = w[0] + (t.tag.empty() ? "" : " " + t.tag);
        if (t.pointers > 0) return pointer_to(spelled);
        if (w[0] == "enum") return {ArgKind::SignedInt, "int", 4, ""};
        diags.warning(t.loc, "'" + spelled + "' is passed by value; a probe argument must fit in a register, so it is left untyped (pass a pointer instead)");
        return {};
    }
    if (w.empty()) return invalid(t, diags, "missing type");
    // Aliases come first: they may also rename a builtin word (`#define bool char`).
    if (w.size() == 1) {
        if (auto it = aliases.find(w[0]); it != aliases.end()) {
            TypeSpec target = it->second;
            target.loc = t.loc;
            target.pointers += t.pointers;
            return resolve_at(target, aliases, diags, depth + 1);
        }
    }
    if (w.size() == 1 && !is_builtin_type_word(w[0])) {
        const std::string& name = w[0];
        if (t.pointers > 0) return pointer_to(name);
        for (const auto& k : kKnownTypedefs)
            if (name == k.name) return {k.kind, k.c_type, k.size, k.kind == ArgKind::Pointer ? "char" : ""};
        diags.warning(t.loc, "unknown type '" + name + "': the argument is left untyped (declare it with typedef or #define, e.g. '#define " + name + " int')");
        return {};
    }
    for (const auto& x : w)
        if (!is_builtin_type_word(x)) return invalid(t, diags, "'" + t.spelling() + "' is not a valid type");
    return resolve_builtin(t, w, diags);
}

}  // namespace

bool is_builtin_type_word(const std::string& w) {
    static constexpr std::string_view words[] = {"signed", "unsigned", "short", "long", "int", "char", "float",
                                                 "double", "void", "bool", "_Bool", "string"};
    return std::find(std::begin(words), std::end(words), std::string_view(w)) != std::end(words);
}

bool is_qualifier_word(const std::string& w) {
    if (w.empty() || (w[0] != 'c' && w[0] != 'v' && w[0] != 's' && w[0] != 'r' && w[0] != 'e' && w[0] != '_'))
        return false;  // most words: a type name or an argument name
    return w == "const" || w == "volatile" || w == "static" || w == "restrict" || w == "register" ||
           w == "extern" || w == "__restrict";
}

ResolvedType resolve_type(const TypeSpec& t, const AliasTable& aliases, Diagnostics& diags) {
    return resolve_at(t, aliases, diags, 0);
}

}  // namespace probekit::spec
