#include "codegen/native_header.h"

#include <cctype>

#include "codegen/text.h"
#include "spec/names.h"

namespace probekit::codegen {
namespace {

using spec::ArgKind;

// Shared by every generated header; guarded so that several generated headers
// can be included in one translation unit. Versioned so that headers from a
// newer probekit never pick up an older definition.
constexpr const char* kHelpers = R"(#ifndef PROBEKIT_GEN_HELPERS_V1
#define PROBEKIT_GEN_HELPERS_V1 1
#ifdef __cplusplus
extern "C++" {
namespace probekit_gen_v1 {
template <class T> using bare = typename std::remove_cv<typename std::remove_reference<T>::type>::type;
/* A builder is an object with operator()(): it runs only when the probe is enabled. */
template <class T, class = void> struct is_builder : std::false_type {};
template <class T> struct is_builder<T, std::void_t<decltype(std::declval<T &>()())>>
    : std::integral_constant<bool, std::is_class<bare<T>>::value> {};
template <class T> __attribute__((__always_inline__)) inline decltype(auto) value(T &&v) {
  if constexpr (is_builder<T>::value) return v(); else return static_cast<T &&>(v);
}
template <class T> using value_t = decltype(::probekit_gen_v1::value(std::declval<T>()));
template <class T, class = void> struct has_c_str : std::false_type {};
template <class T> struct has_c_str<T, std::void_t<decltype(std::declval<const bare<T> &>().c_str())>>
    : std::is_convertible<decltype(std::declval<const bare<T> &>().c_str()), const char *> {};
template <class T> using V = bare<value_t<T>>;
template <class T> inline constexpr bool ok_number = std::is_arithmetic<V<T>>::value || std::is_enum<V<T>>::value;
template <class T> inline constexpr bool ok_pointer =
    std::is_pointer<typename std::decay<value_t<T>>::type>::value || std::is_null_pointer<V<T>>::value;
template <class T> inline constexpr bool ok_string =
    std::is_convertible<typename std::decay<value_t<T>>::type, const char *>::value || has_c_str<value_t<T>>::value;
template <class T> inline constexpr bool ok_any =
    std::is_scalar<typename std::decay<value_t<T>>::type>::value && sizeof(typename std::decay<value_t<T>>::type) <= 8;
template <class To, class T> __attribute__((__always_inline__)) inline To to(const T &v) { return static_cast<To>(v); }
template <class T> __attribute__((__always_inline__)) inline const void *to_pointer(const T &v) { return (const void *)v; }
template <class T> __attribute__((__always_inline__)) inline const char *to_string(const T &v) {
  if constexpr (has_c_str<T>::value) return v.c_str(); else return v;
}
/* Floats travel as their bits in an integer register: every consumer reads
   integer operands, none reads %xmm ones. The real type is in the spec. */
template <class T> __attribute__((__always_inline__)) inline unsigned int f32_bits(const T &v) {
  float f = static_cast<float>(v); unsigned int u; __builtin_memcpy(&u, &f, sizeof u); return u;
}
template <class T> __attribute__((__always_inline__)) inline unsigned long long f64_bits(const T &v) {
  double d = static_cast<double>(v); unsigned long long u; __builtin_memcpy(&u, &d, sizeof u); return u;
}
template <class T> __attribute__((__always_inline__)) inline typename std::decay<T>::type any(const T &v) { return v; }
} /* namespace probekit_gen_v1 */
} /* extern "C++" */
#else
static __inline__ __attribute__((__always_inline__, __unused__)) unsigned int probekit_gen_v1_f32_bits(float f) {
  unsigned int u; __builtin_memcpy(&u, &f, sizeof u); return u;
}
static __inline__ __attribute__((__always_inline__, __unused__)) unsigned long long probekit_gen_v1_f64_bits(double d) {
  unsigned long long u; __builtin_memcpy(&u, &d, sizeof u); return u;
}
#endif
#endif /* PROBEKIT_GEN_HELPERS_V1 */
)";

bool typed(const spec::Probe& p) {
    for (const auto& a : p.args)
        if (a.resolved.kind == ArgKind::Opaque) return false;
    return true;
}

std::string arg_label(const spec::Arg& a, size_t i) {
    return a.name.empty() ? "arg" + std::to_string(i + 1) : a.name;
}

std::string declared(const spec::Arg& a) {
    return a.type.spelling() + (a.name.empty() ? "" : " " + a.name);
}

std::string signature(const spec::Probe& p) {
    std::string s;
    for (size_t i = 0; i < p.args.size(); ++i) s += (i ? ", " : "") + declared(p.args[i]);
    return s;
}

// The C type of a typed wrapper's parameter.
std::string c_param_type(const spec::Arg& a) {
    return a.resolved.kind == ArgKind::Bool ? "_Bool" : a.resolved.c_type;
}

// What the C wrapper hands the marker for argument `v`.
std::string c_marker_arg(const spec::Arg& a, const std::string& v) {
    switch (a.resolved.kind) {
        case ArgKind::Float: return "probekit_gen_v1_f32_bits(" + v + ")";
        case ArgKind::Double: return "probekit_gen_v1_f64_bits(" + v + ")";
        default: return v;
    }
}

struct CxxArg {
    std::string check;    // trait that must hold
    std::string expects;  // for the message
    std::string convert;  // expression over `v`
};

CxxArg cxx_arg(const spec::Arg& a, const std::string& T, const std::string& v) {
    const std::string ns = "::probekit_gen_v1::";
    const auto& r = a.resolved;
    switch (r.kind) {
        case ArgKind::SignedInt:
        case ArgKind::UnsignedInt:
        case ArgKind::Char:
            return {ns + "ok_number<" + T + ">", "a number (" + r.c_type + ")", ns + "to<" + r.c_type + ">(" + v + ")"};
        case ArgKind::Bool: return {ns + "ok_number<" + T + ">", "a bool", ns + "to<bool>(" + v + ")"};
        case ArgKind::Float: return {ns + "ok_number<" + T + ">", "a number (float)", ns + "f32_bits(" + v + ")"};
        case ArgKind::Double: return {ns + "ok_number<" + T + ">", "a number (double)", ns + "f64_bits(" + v + ")"};
        case ArgKind::Pointer:
            return {ns + "ok_pointer<" + T + ">", "a pointer (" + a.type.spelling() + ")", ns + "to_pointer(" + v + ")"};
        case ArgKind::String:
            return {ns + "ok_string<" + T + ">", "a NUL-terminated string (const char * or an object with c_str())",
                    ns + "to_string(" + v + ")"};
        case ArgKind::Opaque:
            return {ns + "ok_any<" + T + ">", "a scalar of at most 8 bytes (" + a.type.spelling() + " is untyped)",
                    ns + "any(" + v + ")"};
    }
    return {};
}

// The gates: per probe, the SDT semaphore (16 bits, bumped by external
// tracers) and the in-process count beside it, read together as one aligned
// 32-bit word. Weak and hidden: every translation unit that includes the
// header defines them, the linker keeps one per probe per linked object, and
// no extra build step (dtrace -G) is needed.
void emit_gates(Text& out, const spec::Spec& spec) {
    out.line("#ifdef __cplusplus");
    out.line("extern \"C\" {");
    out.line("#endif");
    for (const auto& prov : spec.providers)
        for (const auto& p : prov.probes)
            out.line("__attribute__((__weak__, __visibility__(\"hidden\"), __section__(\".probes\"), __aligned__(4), __used__)) volatile unsigned int " +
                     spec::semaphore_name(prov.name, p.name) + ";");
    out.line("#ifdef __cplusplus");
    out.line("}");
    out.line("#endif");
    out.line("");
}

void emit_probe(Text& out, const spec::Provider& prov, const spec::Probe& p, const MarkerBackend& marker) {
    const std::string macro = spec::macro_name(prov.name, p.name);
    const std::string sem = spec::semaphore_name(prov.name, p.name);
    const std::string fn = "probekit_" + prov.name + "_" + p.name;
    const std::string id = prov.name + ":" + p.name;
    const size_t n = p.args.size();

    out.line("/* " + prov.name + ":" + spec::display_name(p.name) + "(" + signature(p) + ")");
    if (!p.doc.empty()) {
        for (const auto& l : split_lines(p.doc)) out.line(" * " + comment_safe(l));
    }
    out.line(" */");

    out.line("#define " + macro + "_ENABLED() (__builtin_expect(" + sem + " != 0, 0))");

    std::string params, call;
    for (size_t i = 0; i < n; ++i) {
        params += (i ? ", " : "") + std::string("arg") + std::to_string(i + 1);
    }
    call = params;

    out.line("#ifdef __cplusplus");
    {
        // C++: one always-inline template per probe. It checks each argument
        // against the spec with a readable static_assert, runs builders (only
        // reachable through the gated form) and converts to the spec's type.
        std::string tparams = "bool Gated", fparams;
        for (size_t i = 0; i < n; ++i) {
            tparams += ", class T" + std::to_string(i + 1);
            fparams += (i ? ", " : "") + std::string("T") + std::to_string(i + 1) + " &&a" + std::to_string(i + 1);
        }
        out.line("extern \"C++\" struct " + fn + " {");
        out.line("  template <" + tparams + ">");
        out.line("  static __attribute__((__always_inline__)) inline void fire(" + fparams + ") {");
        std::string all_ok = "true";
        std::vector<std::string> marker_args;
        for (size_t i = 0; i < n; ++i) {
            const std::string k = std::to_string(i + 1);
            const std::string T = "T" + k;
            CxxArg c = cxx_arg(p.args[i], T, "v" + k);
            const std::string what = id + ": argument " + k + " '" + arg_label(p.args[i], i) + "'";
            out.line("    static_assert(Gated || !::probekit_gen_v1::is_builder<" + T + ">::value, \"" +
                     c_escape(what + " is a builder (a callable): builders run only in the gated form " + macro + "_GATED(...)") + "\");");
            out.line("    static_assert(" + c.check + ", \"" +
                     c_escape(what + " must be " + c.expects + "; the spec declares '" + declared(p.args[i]) + "'") + "\");");
            all_ok += " && " + c.check;
            marker_args.push_back(c.convert);
        }
        if (n == 0) out.line("    (void)0;");
        out.line("    if constexpr (" + all_ok + ") {");
        for (size_t i = 0; i < n; ++i) {
            const std::string k = std::to_string(i + 1);
            out.line("      auto &&v" + k + " = ::probekit_gen_v1::value(static_cast<T" + k + " &&>(a" + k + "));");
        }
        out.line("      " + marker.site(prov.name, p.name, marker_args) + ";");
        out.line("    }");
        out.line("  }");
        out.line("};");
        out.line("#define " + macro + "(" + params + ") " + fn + "::fire<false>(" + call + ")");
        out.line("#define " + macro + "_GATED(" + params + ") do { if (" + macro + "_ENABLED()) " + fn + "::fire<true>(" + call + "); } while (0)");
    }
    out.line("#else");
    if (typed(p)) {
        // C: an always-inline function with the spec's parameter types, so the
        // compiler converts (and warns) exactly as for any C call.
        std::string cparams = n == 0 ? "void" : "";
        std::vector<std::string> marker_args;
        for (size_t i = 0; i < n; ++i) {
            const std::string v = "probekit_arg" + std::to_string(i + 1);
            cparams += (i ? ", " : "") + c_param_type(p.args[i]) + " " + v;
            marker_args.push_back(c_marker_arg(p.args[i], v));
        }
        out.line("static __inline__ __attribute__((__always_inline__, __unused__)) void " + fn + "(" + cparams + ") {");
        out.line("  " + marker.site(prov.name, p.name, marker_args) + ";");
        out.line("}");
        out.line("#define " + macro + "(" + params + ") " + fn + "(" + call + ")");
        out.line("#define " + macro + "_GATED(" + params + ") do { if (" + macro + "_ENABLED()) " + fn + "(" + call + "); } while (0)");
    } else {
        // Some argument types are unknown to probekit: untyped, as sys/sdt.h.
        std::vector<std::string> marker_args;
        for (size_t i = 0; i < n; ++i) marker_args.push_back("(arg" + std::to_string(i + 1) + ")");
        const std::string site = marker.site(prov.name, p.name, marker_args);
        out.line("#define " + macro + "(" + params + ") " + site);
        out.line("#define " + macro + "_GATED(" + params + ") do { if (" + macro + "_ENABLED()) " + site + "; } while (0)");
    }
    out.line("#endif");
    out.line("");
}

}  // namespace

std::string guard_from_path(const std::string& path) {
    std::string base = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
    std::string g = "PROBEKIT_";
    for (char c : base) g += std::isalnum(static_cast<unsigned char>(c)) ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : '_';
    return g;
}

std::string native_header(const spec::Spec& spec, const MarkerBackend& marker, const HeaderOptions& options) {
    Text out;
    const std::string guard = options.guard.empty() ? guard_from_path(spec.path + ".h") : options.guard;
    out.line("/* Generated by probekit compile from " + comment_safe(options.source_name.empty() ? spec.path : options.source_name) + ". Do not edit. */");
    out.line("#ifndef " + guard);
    out.line("#define " + guard + " 1");
    out.line("");
    // C++ linkage for what is included, so the header may itself be included
    // inside extern "C" { } as C headers often are.
    out.line("#ifdef __cplusplus");
    out.line("extern \"C++\" {");
    out.line("#include <type_traits>");
    out.line("#endif");
    out.raw(marker.prelude());
    out.line("#include <stddef.h>");
    out.line("#include <stdint.h>");
    out.line("#include <sys/types.h>");
    out.line("#ifdef __cplusplus");
    out.line("}");
    out.line("#endif");
    out.line("");
    out.raw(kHelpers);
    out.line("");
    emit_gates(out, spec);
    for (const auto& prov : spec.providers)
        for (const auto& p : prov.probes) emit_probe(out, prov, p, marker);
    out.line("#endif /* " + guard + " */");
    return out.str();
}

}  // namespace probekit::codegen
