#include "codegen/native_header.h"

#include <cctype>

#include "codegen/probekit_note.h"
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
/* Untyped arguments go to the marker as they are; nullptr as a null pointer. */
template <class T> __attribute__((__always_inline__)) inline auto any(const T &v) {
  if constexpr (std::is_null_pointer<T>::value) return (const void *)0;
  else return static_cast<typename std::decay<T>::type>(v);
}
/* The sdt size of a value of type T: -N for signed, N for unsigned N-byte values. */
template <class T> constexpr int sdt_size() {
  using U = typename std::decay<T>::type;
  if constexpr (std::is_pointer<U>::value || std::is_null_pointer<U>::value) return (int)sizeof(void *);
  else if constexpr (std::is_enum<U>::value)
    return std::is_signed<typename std::underlying_type<U>::type>::value ? -(int)sizeof(U) : (int)sizeof(U);
  else return std::is_signed<U>::value ? -(int)sizeof(U) : (int)sizeof(U);
}
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

std::string numbered(const std::string& prefix, size_t n, const std::string& sep = ", ") {
    std::string s;
    for (size_t i = 0; i < n; ++i) s += (i ? sep : "") + prefix + std::to_string(i + 1);
    return s;
}

// The C type of a typed wrapper's parameter.
std::string c_param_type(const spec::Arg& a) {
    return a.resolved.kind == ArgKind::Bool ? "_Bool" : a.resolved.c_type;
}

// What the C wrappers hand the marker for parameter `v`.
std::string c_marker_value(const spec::Arg& a, const std::string& v) {
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

struct ProbeNames {
    std::string macro, sem, fn, id, meta;
};

Site make_site(const spec::Provider& prov, const spec::Probe& p, const ProbeNames& names, bool by_call,
               const std::vector<SiteArg>& args) {
    return Site{prov.name, p.name, by_call, names.meta, args};
}

void emit_cxx(Text& out, const spec::Provider& prov, const spec::Probe& p, const ProbeNames& nm, const MarkerBackend& marker) {
    const size_t n = p.args.size();
    const std::string params = numbered("arg", n);
    // The out-of-line site that the gated form calls: a call has already
    // retired the caller's red zone, so its attach point can be a 5-byte NOP.
    // Hidden, so that two shared objects with the same provider never bind
    // each other's copies.
    std::vector<SiteArg> slow_args;
    std::string ctparams, cparams;
    for (size_t i = 0; i < n; ++i) {
        const std::string k = std::to_string(i + 1);
        ctparams += (i ? ", " : "") + std::string("class C") + k;
        cparams += (i ? ", " : "") + std::string("C") + k + " c" + k;
        slow_args.push_back({"c" + k, "::probekit_gen_v1::sdt_size<C" + k + ">()"});
    }
    out.line("extern \"C++\" struct " + nm.fn + " {");
    if (n > 0) out.line("  template <" + ctparams + ">");
    out.line("  static __attribute__((__noinline__, __visibility__(\"hidden\"))) void slow(" + cparams + ") {");
    out.line("    " + marker.site(make_site(prov, p, nm, true, slow_args)) + ";");
    out.line("  }");

    // The inline form: checks each argument against the spec with a readable
    // static_assert, runs builders (reachable only through the gated form),
    // converts to the spec's type, then places the site or calls `slow`.
    std::string tparams = "bool Gated", fparams;
    for (size_t i = 0; i < n; ++i) {
        tparams += ", class T" + std::to_string(i + 1);
        fparams += (i ? ", " : "") + std::string("T") + std::to_string(i + 1) + " &&a" + std::to_string(i + 1);
    }
    out.line("  template <" + tparams + ">");
    out.line("  static __attribute__((__always_inline__)) inline void fire(" + fparams + ") {");
    std::string all_ok = "true";
    std::vector<SiteArg> inline_args;
    std::vector<std::string> conversions;
    for (size_t i = 0; i < n; ++i) {
        const std::string k = std::to_string(i + 1);
        const std::string T = "T" + k;
        CxxArg c = cxx_arg(p.args[i], T, "v" + k);
        const std::string what = nm.id + ": argument " + k + " '" + arg_label(p.args[i], i) + "'";
        out.line("    static_assert(Gated || !::probekit_gen_v1::is_builder<" + T + ">::value, \"" +
                 c_escape(what + " is a builder (a callable): builders run only in the gated form " + nm.macro + "_GATED(...)") + "\");");
        out.line("    static_assert(" + c.check + ", \"" +
                 c_escape(what + " must be " + c.expects + "; the spec declares '" + declared(p.args[i]) + "'") + "\");");
        all_ok += " && " + c.check;
        conversions.push_back(c.convert);
        inline_args.push_back({"c" + k, "::probekit_gen_v1::sdt_size<decltype(c" + k + ")>()"});
    }
    out.line("    if constexpr (" + all_ok + ") {");
    for (size_t i = 0; i < n; ++i) {
        const std::string k = std::to_string(i + 1);
        out.line("      auto &&v" + k + " = ::probekit_gen_v1::value(static_cast<T" + k + " &&>(a" + k + "));");
        out.line("      auto c" + k + " = " + conversions[i] + ";");
    }
    out.line("      if constexpr (Gated) slow(" + numbered("c", n) + ");");
    out.line("      else " + marker.site(make_site(prov, p, nm, false, inline_args)) + ";");
    out.line("    }");
    out.line("  }");
    out.line("};");
    out.line("#define " + nm.macro + "(" + params + ") " + nm.fn + "::fire<false>(" + params + ")");
    out.line("#define " + nm.macro + "_GATED(" + params + ") do { if (" + nm.macro + "_ENABLED()) " + nm.fn + "::fire<true>(" + params + "); } while (0)");
}

void emit_c(Text& out, const spec::Provider& prov, const spec::Probe& p, const ProbeNames& nm, const MarkerBackend& marker) {
    const size_t n = p.args.size();
    const std::string params = numbered("arg", n);
    if (typed(p)) {
        // Always-inline and out-of-line functions with the spec's parameter
        // types, so the compiler converts (and warns) exactly as for any C call.
        std::string cparams = n == 0 ? "void" : "";
        std::vector<SiteArg> args;
        for (size_t i = 0; i < n; ++i) {
            const std::string v = "probekit_arg" + std::to_string(i + 1);
            cparams += (i ? ", " : "") + c_param_type(p.args[i]) + " " + v;
            const std::string value = c_marker_value(p.args[i], v);
            args.push_back({value, "PROBEKIT_ARGSIZE(" + value + ")"});
        }
        out.line("static __inline__ __attribute__((__always_inline__, __unused__)) void " + nm.fn + "(" + cparams + ") {");
        out.line("  " + marker.site(make_site(prov, p, nm, false, args)) + ";");
        out.line("}");
        // `inline` so that a unit that never uses it emits nothing (gcc -O0
        // emits unused static functions, notes included); `noinline` so that
        // it stays a real call. gcc warns about the pair: hence the pragmas.
        out.line("#pragma GCC diagnostic push");
        out.line("#pragma GCC diagnostic ignored \"-Wattributes\"");
        out.line("static __inline__ __attribute__((__noinline__, __unused__)) void " + nm.fn + "_slow(" + cparams + ") {");
        out.line("  " + marker.site(make_site(prov, p, nm, true, args)) + ";");
        out.line("}");
        out.line("#pragma GCC diagnostic pop");
        out.line("#define " + nm.macro + "(" + params + ") " + nm.fn + "(" + params + ")");
        out.line("#define " + nm.macro + "_GATED(" + params + ") do { if (" + nm.macro + "_ENABLED()) " + nm.fn + "_slow(" + params + "); } while (0)");
        return;
    }
    // Some argument types are unknown to probekit: untyped, as sys/sdt.h, and
    // always inline (no function can take them). A struct by value is a
    // compile error that says so.
    std::vector<SiteArg> args;
    std::string checks;
    for (size_t i = 0; i < n; ++i) {
        const std::string a = "(arg" + std::to_string(i + 1) + ")";
        args.push_back({a, "PROBEKIT_ARGSIZE(" + a + ")"});
        checks += "_Static_assert(__builtin_classify_type" + a + " != 12 && __builtin_classify_type" + a +
                  " != 13 && (__builtin_classify_type" + a + " == 5 || sizeof" + a + " <= 8), \"" +
                  c_escape(nm.id + ": argument " + std::to_string(i + 1) + " '" + arg_label(p.args[i], i) +
                           "' must be a scalar of at most 8 bytes") + "\"); ";
    }
    const std::string site = marker.site(make_site(prov, p, nm, false, args));
    out.line("#define " + nm.macro + "(" + params + ") do { " + checks + site + "; } while (0)");
    out.line("#define " + nm.macro + "_GATED(" + params + ") do { " + checks + "if (" + nm.macro + "_ENABLED()) " + site + "; } while (0)");
}

void emit_probe(Text& out, const spec::Provider& prov, const spec::Probe& p, const MarkerBackend& marker) {
    ProbeNames nm;
    nm.macro = spec::macro_name(prov.name, p.name);
    nm.sem = spec::semaphore_name(prov.name, p.name);
    nm.fn = spec::internal_name(prov.name, p.name);
    nm.id = prov.name + ":" + p.name;

    out.line("/* " + prov.name + ":" + spec::display_name(p.name) + "(" + signature(p) + ")");
    if (!p.doc.empty()) {
        for (const auto& l : split_lines(p.doc)) out.line(" * " + comment_safe(l));
    }
    out.line(" */");
    if (marker.writes_metadata()) {
        nm.meta = spec::meta_macro_name(prov.name, p.name);
        out.line("#define " + nm.meta + " \"" + c_escape(probekit_note_asm(prov.name, p)) + "\"");
    }
    out.line("#define " + nm.macro + "_ENABLED() (__builtin_expect(" + nm.sem + " != 0, 0))");
    out.line("#ifdef __cplusplus");
    emit_cxx(out, prov, p, nm, marker);
    out.line("#else");
    emit_c(out, prov, p, nm, marker);
    out.line("#endif");
    out.line("");
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
    // The kernel finds a semaphore by its file offset and bumps the first
    // writable mapping of that file page when a process starts. lld and mold
    // let the RELRO segment share a file page with the writable data, so a
    // semaphore in that page would be bumped in the RELRO mapping instead and
    // a probe traced from process start would never open. Starting .probes
    // on a page of its own prevents that; the COMDAT group keeps one such
    // anchor per linked object, "R" keeps it through --gc-sections.
    out.line("#if defined(__x86_64__) && !defined(PROBEKIT_PROBES_PAGE_V1)");
    out.line("#define PROBEKIT_PROBES_PAGE_V1 1");
    out.line("__asm__(\".pushsection .probes,\\\"awGR\\\",\\\"progbits\\\",probekit.probes.page,comdat\\n.balign 4096\\n.byte 0\\n.popsection\");");
    out.line("#endif");
    out.line("");
}

}  // namespace

std::string guard_from_path(const std::string& path) {
    // Mixed case and the "_guard" ending keep it apart from every generated
    // name: macros are upper case, semaphores end in "_semaphore", internals
    // start with "probekit_".
    std::string base = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
    std::string g = "PROBEKIT_included_";
    for (char c : base) g += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    return g + "_guard";
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
