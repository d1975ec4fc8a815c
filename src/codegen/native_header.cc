#include "codegen/native_header.h"

#include <algorithm>
#include <cctype>

#include "codegen/probekit_note.h"
#include "codegen/text.h"
#include "spec/names.h"
#include "spec/sema.h"

namespace probekit::codegen {
namespace {

using spec::ArgKind;

// Shared by every generated header; guarded so that several generated headers
// can be included in one translation unit. Versioned so that headers from a
// newer probekit never pick up an older definition.
constexpr const char* kHelpers = R"helpers(#ifndef PROBEKIT_GEN_HELPERS_V1
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
template <class T> __attribute__((__always_inline__)) inline const char *to_string(const T &v) {
  if constexpr (has_c_str<T>::value) return v.c_str(); else return v;
}
template <class T> __attribute__((__always_inline__)) inline unsigned int f32_bits(T v) {
  float f = static_cast<float>(v); unsigned int u; __builtin_memcpy(&u, &f, sizeof u); return u;
}
template <class T> __attribute__((__always_inline__)) inline unsigned long long f64_bits(T v) {
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
/* Floats travel as their bits in an integer register: every consumer reads
   integer operands, none reads %xmm ones. The real type is in the spec. */
#ifdef __has_builtin
#if __has_builtin(__builtin_bit_cast)
#define PROBEKIT_GEN_V1_F32(v) __builtin_bit_cast(unsigned int, static_cast<float>(v))
#define PROBEKIT_GEN_V1_F64(v) __builtin_bit_cast(unsigned long long, static_cast<double>(v))
#endif
#endif
#ifndef PROBEKIT_GEN_V1_F32
#define PROBEKIT_GEN_V1_F32 ::probekit_gen_v1::f32_bits
#define PROBEKIT_GEN_V1_F64 ::probekit_gen_v1::f64_bits
#endif
/* Each probe's check<Gated, T...> holds a static_assert per argument with
   the spec's words (a builder only in the gated form, the type), and `ok`
   for plain() and fire() to stop at (one error per mistake, not a cascade).
   Then each argument goes through its conversion to the spec's type, a
   prefix such as static_cast<int> that the per-arity macros apply to it:
   casts and builtins where they do, so that a site inlines nothing more.
   plain() takes numbers and pointers by value: references to the caller's
   locals cost gcc 7% more work on a probe-dense unit (docs/benchmarks.md,
   section 2). fire(), the gated form's, forwards
   builders and converts their results inside the call to slow(): the
   std::string a builder returns lives until the probe has fired. */
#define PROBEKIT_GEN_V1_CHECK(k, trait, id, arg, macro, expects) \
  static_assert(G || !::probekit_gen_v1::is_builder<T##k>::value, id ": argument " #k " '" arg \
                "' is a builder (a callable): builders run only in the gated form " macro "_GATED(...)"); \
  static constexpr bool ok##k = ::probekit_gen_v1::trait<T##k>; \
  static_assert(ok##k, id ": argument " #k " '" arg "' must be " expects);
#define PROBEKIT_GEN_V1_AI __attribute__((__always_inline__)) inline
#define PROBEKIT_GEN_V1_PLAIN(fn) fn::plain
#define PROBEKIT_GEN_V1_GATED(fn) fn::fire
#else
static __inline__ __attribute__((__always_inline__, __unused__)) unsigned int probekit_gen_v1_f32_bits(float f) {
  unsigned int u; __builtin_memcpy(&u, &f, sizeof u); return u;
}
static __inline__ __attribute__((__always_inline__, __unused__)) unsigned long long probekit_gen_v1_f64_bits(double d) {
  unsigned long long u; __builtin_memcpy(&u, &d, sizeof u); return u;
}
#define PROBEKIT_GEN_V1_PLAIN(fn) fn
#define PROBEKIT_GEN_V1_GATED(fn) fn##_slow
#endif
/* The gates: per probe, the SDT semaphore (16 bits, bumped by external
   tracers) and the in-process count beside it, read together as one aligned
   32-bit word. Weak and hidden: every unit that includes the header defines
   them, the linker keeps one per probe per linked object, and no extra build
   step (dtrace -G) is needed. */
#define PROBEKIT_GEN_V1_GATE(sem) \
  __attribute__((__weak__, __visibility__("hidden"), __section__(".probes"), __aligned__(4), __used__)) volatile unsigned int sem
/* A relaxed atomic load of a volatile word: one plain `mov`, never hoisted
   out of a loop, and race-free against the runtime's atomic updates of the
   in-process half (TSan agrees). */
#define PROBEKIT_GEN_V1_LOAD(sem) __atomic_load_n(&(sem), __ATOMIC_RELAXED)
#define PROBEKIT_GEN_V1_ENABLED(sem) (__builtin_expect(PROBEKIT_GEN_V1_LOAD(sem) != 0, 0))
/* The gated form's out-of-line function. noipa (gcc) also keeps gcc from
   analysing it for its callers (clobbered registers, side effects): with
   thousands of calls to it in a unit, that analysis costs more than the
   call sites themselves (docs/benchmarks.md, section 2). */
#ifdef __has_attribute
#if __has_attribute(__noipa__)
#define PROBEKIT_GEN_V1_OUT_OF_LINE __noipa__
#endif
#endif
#ifndef PROBEKIT_GEN_V1_OUT_OF_LINE
#define PROBEKIT_GEN_V1_OUT_OF_LINE __noinline__
#endif
/* The gated form: `call` runs when the gate is open. On x86-64 the test is
   one `cmpl` of the word and a `jne` in asm goto, rather than a C `if` on the
   load: the same aligned 32-bit read, executed every time (asm goto is
   volatile), but gcc compiles a unit with thousands of gated sites in about
   a third less time: a C branch per site is what costs (docs/benchmarks.md,
   section 2). The path not taken is two instructions. gcc only: clang (14,
   Debian 12's) checks every asm goto of a function against every asm-goto
   label in it, and rejects two gated sites with a destructor between them
   ("cannot jump from this asm goto statement to one of its possible
   targets"), so clang gets the C `if`: three instructions (load, test, jne). */
#if defined(__x86_64__) && !defined(__clang__)
/* One label per site, named by __COUNTER__ (__label__ would do, but
   -Wpedantic rejects it in C); _ expands the counter, __ pastes it. */
#define PROBEKIT_GEN_V1_IF_ENABLED(sem, call) PROBEKIT_GEN_V1_IF_ENABLED_(sem, call, __COUNTER__)
#define PROBEKIT_GEN_V1_IF_ENABLED_(sem, call, n) PROBEKIT_GEN_V1_IF_ENABLED__(sem, call, n)
#define PROBEKIT_GEN_V1_IF_ENABLED__(sem, call, n) \
  do { \
    __asm__ goto("cmpl $0, %0\n\tjne %l1" : : "m"(sem) : : probekit_gen_v1_on_##n); \
    if (0) { \
    probekit_gen_v1_on_##n: \
      call; \
    } \
  } while (0)
#else
#define PROBEKIT_GEN_V1_IF_ENABLED(sem, call) do { if (PROBEKIT_GEN_V1_ENABLED(sem)) call; } while (0)
#endif
#endif /* PROBEKIT_GEN_HELPERS_V1 */
)helpers";

// The runtime hook, for headers whose marker writes descriptors (x86-64):
// weak references to libprobekit (include/probekit/runtime_abi.h), so that a
// program without it pays nothing and one with it has every object's probes
// registered when the object loads. Each unit registers its object's whole
// descriptor array; the runtime counts the repeats.
constexpr const char* kRuntimeHook = R"hook(#ifndef PROBEKIT_GEN_V1_DISPATCH
#if PROBEKIT_NATIVE_MARKER
#ifdef __cplusplus
extern "C" {
#endif
extern void probekit_register_v1(struct probekit_probe_v1 *, struct probekit_probe_v1 *) __attribute__((__weak__));
extern void probekit_unregister_v1(struct probekit_probe_v1 *, struct probekit_probe_v1 *) __attribute__((__weak__));
extern void probekit_dispatch_v1(struct probekit_probe_v1 *, const unsigned long long *) __attribute__((__weak__));
extern struct probekit_probe_v1 __start_probekit_probes_v1[] __attribute__((__weak__, __visibility__("hidden")));
extern struct probekit_probe_v1 __stop_probekit_probes_v1[] __attribute__((__weak__, __visibility__("hidden")));
/* Priority 101, the first one programs may use: the object's probes are
   registered before any ordinary static constructor could listen to them. */
static void __attribute__((__constructor__(101), __used__)) probekit_gen_v1_register(void) {
  if (probekit_register_v1) probekit_register_v1(__start_probekit_probes_v1, __stop_probekit_probes_v1);
}
static void __attribute__((__destructor__(101), __used__)) probekit_gen_v1_unregister(void) {
  if (probekit_unregister_v1) probekit_unregister_v1(__start_probekit_probes_v1, __stop_probekit_probes_v1);
}
#ifdef __cplusplus
}
#endif
#define PROBEKIT_GEN_V1_DESC(prov, name) \
  extern struct probekit_probe_v1 probekit_gen_v1_desc_##prov##_##name __attribute__((__visibility__("hidden")))
/* In a gated probe's out-of-line site: in-process listeners, if any. */
#define PROBEKIT_GEN_V1_DISPATCH(prov, name, ...)                                        \
  do {                                                                                   \
    if (__builtin_expect((PROBEKIT_GEN_V1_LOAD(prov##_##name##_semaphore) >> 16) != 0, 0) && probekit_dispatch_v1) { \
      const unsigned long long probekit_gen_v1_args[] = {__VA_ARGS__};                   \
      probekit_dispatch_v1(&probekit_gen_v1_desc_##prov##_##name, probekit_gen_v1_args); \
    }                                                                                    \
  } while (0)
#define PROBEKIT_GEN_V1_DISPATCH0(prov, name)                                            \
  do {                                                                                   \
    if (__builtin_expect((PROBEKIT_GEN_V1_LOAD(prov##_##name##_semaphore) >> 16) != 0, 0) && probekit_dispatch_v1) \
      probekit_dispatch_v1(&probekit_gen_v1_desc_##prov##_##name, 0);                    \
  } while (0)
#else /* no descriptors on other architectures (the sys/sdt.h marker): no listeners yet */
#define PROBEKIT_GEN_V1_DESC(prov, name) struct probekit_probe_v1
#define PROBEKIT_GEN_V1_DISPATCH(prov, name, ...) do { } while (0)
#define PROBEKIT_GEN_V1_DISPATCH0(prov, name) do { } while (0)
#endif
#endif /* PROBEKIT_GEN_V1_DISPATCH */
)hook";

bool typed(const spec::Probe& p) {
    for (const auto& a : p.args)
        if (a.resolved.kind == ArgKind::Opaque) return false;
    return true;
}

std::string declared(const spec::Arg& a) {
    return a.type.spelling() + (a.name.empty() ? "" : " " + a.name);
}

std::string signature(const spec::Probe& p) {
    std::string s;
    for (size_t i = 0; i < p.args.size(); ++i) s += (i ? ", " : "") + declared(p.args[i]);
    return s;
}

std::string numbered(const char* prefix, size_t n, size_t first = 1) {
    std::string s;
    for (size_t i = 0; i < n; ++i) s += (i ? ", " : "") + (prefix + std::to_string(i + first));
    return s;
}

// What the C++ fire() does with one argument: the trait it must satisfy, the
// words of the message when it does not, the conversion to the spec's type.
struct CxxArg {
    const char* check;
    const char* expects;         // then `detail` in parentheses, if any
    std::string detail;
    std::string convert;         // a prefix: <convert>(value)
    std::string_view converted;  // the type <convert> returns, the gated slow()'s parameter; "" if untyped
};

CxxArg cxx_arg(const spec::Arg& a) {
    const auto& r = a.resolved;
    switch (r.kind) {
        case ArgKind::SignedInt:
        case ArgKind::UnsignedInt:
        case ArgKind::Char:
            return {"ok_number", "a number", r.c_type, "static_cast<" + r.c_type + ">", r.c_type};
        case ArgKind::Bool: return {"ok_number", "a bool", "", "static_cast<bool>", "bool"};
        case ArgKind::Float: return {"ok_number", "a number", "float", "PROBEKIT_GEN_V1_F32", "unsigned int"};
        case ArgKind::Double: return {"ok_number", "a number", "double", "PROBEKIT_GEN_V1_F64", "unsigned long long"};
        case ArgKind::Pointer: return {"ok_pointer", "a pointer", a.type.spelling(), "(const void *)", "const void *"};
        case ArgKind::String:
            return {"ok_string", "a NUL-terminated string", "const char * or an object with c_str()",
                    "::probekit_gen_v1::to_string", "const char *"};
        case ArgKind::Opaque:
            return {"ok_any", "a scalar of at most 8 bytes", a.type.spelling() + " is untyped", "::probekit_gen_v1::any", ""};
    }
    return {};
}

// The C type of a typed wrapper's parameter, and the function (if any) that
// turns it into what the marker takes.
std::string_view c_param_type(const spec::Arg& a) {
    if (a.resolved.kind == ArgKind::Bool) return "_Bool";
    return a.resolved.c_type;
}
const char* c_convert(const spec::Arg& a) {
    switch (a.resolved.kind) {
        case ArgKind::Float: return "probekit_gen_v1_f32_bits";
        case ArgKind::Double: return "probekit_gen_v1_f64_bits";
        default: return "";
    }
}

// Everything that places a site is written once per arity, as macros over
// the provider and probe names, so that a probe costs the header a few short
// lines whatever its arity. The names carry the backend's tag and are
// guarded: several generated headers may meet in one unit. The per-arity
// parameter lists that every probe repeats are made here once.
//
// Two families: typed probes pass each argument's sdt size as a literal
// (zK); untyped probes (C++ only, an argument type probekit cannot know)
// have the compiler compute it from the argument's type.
class ArityMacros {
public:
    explicit ArityMacros(const MarkerBackend& marker) : marker_(marker) {
        for (size_t n = 0; n <= spec::kMaxProbeArgs; ++n) {
            auto& t = text_[n];
            t.slow = name("SLOW", n);
            t.call = name("CALL", n);
            t.fire = name("FIRE", n);
            t.slow_untyped = name("SLOWX", n);
            t.fire_untyped = name("FIREX", n);
            t.c_functions = name("C", n);
            t.params = numbered("arg", n);
            if (n) t.slow_template = "template <" + numbered("class C", n) + "> ";
            t.cxx_tparams = n ? numbered("class T", n) : "class = void";
            t.check_args = n ? ", " + numbered("T", n) : "";
            for (size_t i = 1; i <= n; ++i) {
                const std::string k = std::to_string(i);
                t.cxx_fparams += (i > 1 ? ", T" : "T") + k + " &&a" + k;
                t.all_ok += (i > 1 ? " && ok" : "ok") + k;
            }
            if (n == 0) t.all_ok = "true";
        }
    }

    struct Text_ {
        std::string slow, call, fire, slow_untyped, fire_untyped, c_functions;  // the macros' names
        std::string params;                   // "arg1, arg2"
        std::string cxx_tparams;              // "class T1, class T2"
        std::string check_args;               // ", T1, T2"
        std::string slow_template;            // "template <class C1, class C2> " (untyped probes' slow())
        std::string cxx_fparams;              // "T1 &&a1, T2 &&a2" (fire())
        std::string all_ok;                   // "ok1 && ok2"
    };
    const Text_& operator[](size_t n) const { return text_[n]; }

    // Typed probes: C++ slow() and fire()'s tail, and the C functions.
    void define(Text& out, size_t n) const {
        out.line("#ifndef ", text_[n].fire);
        // C++: the out-of-line site that the gated form calls (a call has
        // retired the caller's red zone, so its attach point can be a 5-byte
        // NOP; hidden, so two shared objects never bind each other's copies),
        // and the tail of fire(): that call, or an inline site.
        std::vector<SiteArg> slow_args, inline_args, c_args;
        std::string c_params = n ? "" : "void", slow_macro_params, fire_macro_params, c_macro_params;
        for (size_t i = 1; i <= n; ++i) {
            const std::string k = std::to_string(i);
            slow_args.push_back({"c" + k, "z" + k});
            inline_args.push_back({"cv" + k + "(a" + k + ")", "z" + k});
            c_args.push_back({"f" + k + "(probekit_arg" + k + ")", "z" + k});
            c_params += (i > 1 ? ", t" : "t") + k + " probekit_arg" + k;
            slow_macro_params += ", C" + k + ", z" + k;
            fire_macro_params += ", cv" + k + ", z" + k;
            c_macro_params += ", t" + k + ", f" + k + ", z" + k;
        }
        // slow() takes the converted types: one plain function per probe,
        // not a template per call: thousands of gated sites compile faster.
        out.line("#define ", text_[n].slow, "(prov, name", slow_macro_params, ") ", slow_head(n));
        out.line("  ", marker_.site({"prov", "name", true, true, slow_args}), ";", dispatch(slow_args), " }");
        out.line("#define ", text_[n].fire, "(prov, name", fire_macro_params, ") ", marker_.site({"prov", "name", false, true, inline_args}), ";");
        // C: an always-inline function with the spec's parameter types (the
        // compiler converts and warns as for any call), and the out-of-line
        // one for the gated form: `inline` so that a unit that never calls it
        // emits nothing (gcc -O0 would, notes included), `noinline` so that
        // it stays a call.
        out.line("#define ", text_[n].c_functions, "(prov, name", c_macro_params, ") \\");
        out.line("  static __inline__ __attribute__((__always_inline__, __unused__)) void probekit_##prov##_##name(", c_params, ") { \\");
        out.line("    ", marker_.site({"prov", "name", false, true, c_args}), "; } \\");
        out.line("  static __inline__ __attribute__((PROBEKIT_GEN_V1_OUT_OF_LINE, __unused__)) void probekit_##prov##_##name##_slow(", c_params, ") { \\");
        out.line("    ", marker_.site({"prov", "name", true, true, c_args}), ";", dispatch(c_args), " }");
        out.line("#endif");
    }

    // The gated form's call to slow() (C++): each argument converted in the
    // call's own full-expression, so a builder's std::string outlives the probe.
    void define_call(Text& out, size_t n) const {
        out.line("#ifndef ", text_[n].call);
        out.raw("#define ", text_[n].call, "(", numbered("cv", n), ") slow(");
        for (size_t i = 1; i <= n; ++i) {
            const std::string k = std::to_string(i);
            out.raw(i > 1 ? ", cv" : "cv", k, "(::probekit_gen_v1::value(static_cast<T", k, " &&>(a", k, ")))");
        }
        out.line(");");
        out.line("#endif");
    }

    // Untyped probes (C++): slow() is a template (the struct puts its header
    // before the macro) and each size is computed from the argument's type.
    void define_untyped(Text& out, size_t n) const {
        out.line("#ifndef ", text_[n].fire_untyped);
        std::vector<SiteArg> by_type, by_value;
        std::string fire_macro_params;
        for (size_t i = 1; i <= n; ++i) {
            const std::string k = std::to_string(i);
            const std::string v = "cv" + k + "(a" + k + ")";
            by_type.push_back({"c" + k, "::probekit_gen_v1::sdt_size<C" + k + ">()"});
            by_value.push_back({v, "::probekit_gen_v1::sdt_size<decltype(" + v + ")>()"});
            fire_macro_params += ", cv" + k;
        }
        out.line("#define ", text_[n].slow_untyped, "(prov, name) ", slow_head(n));
        out.line("  ", marker_.site({"prov", "name", true, false, by_type}), ";", dispatch(by_type), " }");
        out.line("#define ", text_[n].fire_untyped, "(prov, name", fire_macro_params, ") ", marker_.site({"prov", "name", false, false, by_value}), ";");
        out.line("#endif");
    }

private:
    std::string name(const char* what, size_t n) const {
        return std::string("PROBEKIT_GEN_V1_") + marker_.tag() + "_" + what + std::to_string(n);
    }
    // C++ slow()'s head: its parameters are C1 c1, C2 c2, ...
    static std::string slow_head(size_t n) {
        std::string params;
        for (size_t i = 1; i <= n; ++i) params += (i > 1 ? ", C" : "C") + std::to_string(i) + " c" + std::to_string(i);
        return "static __attribute__((PROBEKIT_GEN_V1_OUT_OF_LINE, __visibility__(\"hidden\"))) void slow(" + params + ") { \\";
    }
    // Out-of-line sites also hand the probe, with the site's argument
    // values, to in-process listeners (backends that write descriptors only).
    std::string dispatch(const std::vector<SiteArg>& args) const {
        if (!marker_.writes_metadata()) return "";
        if (args.empty()) return " PROBEKIT_GEN_V1_DISPATCH0(prov, name);";
        std::string values;
        for (const auto& a : args) values += ", (unsigned long long)(" + a.value + ")";
        return " PROBEKIT_GEN_V1_DISPATCH(prov, name" + values + ");";
    }
    const MarkerBackend& marker_;
    Text_ text_[spec::kMaxProbeArgs + 1];
};

struct ProbeNames {
    std::string macro, sem, fn, id;
};

ProbeNames names_of(const spec::Provider& prov, const spec::Probe& p) {
    return {spec::macro_name(prov.name, p.name), spec::semaphore_name(prov.name, p.name),
            spec::internal_name(prov.name, p.name), prov.name + ":" + p.name};
}

// The probe's comment, metadata, _ENABLED() and, when both languages share
// them, its macros.
void emit_common(Text& out, const spec::Provider& prov, const spec::Probe& p, const ProbeNames& nm,
                 const MarkerBackend& marker, const ArityMacros& am) {
    out.line("/* ", prov.name, ":", spec::display_name(p.name), "(", comment_safe(signature(p)), ")");
    if (!p.doc.empty())
        for (const auto& l : split_lines(p.doc)) out.line(" * ", comment_safe(l));
    out.line(" */");
    if (marker.writes_metadata()) {
        out.raw("#define PROBEKIT_META_", prov.name, "_", p.name, " ");
        probekit_note_entry(out, prov.name, p);
        out.line();
    }
    out.line("#define ", nm.macro, "_ENABLED() PROBEKIT_GEN_V1_ENABLED(", nm.sem, ")");
    if (!typed(p)) return;  // the C form is a macro of its own: emit_c_untyped()
    const std::string& params = am[p.args.size()].params;
    out.line("#define ", nm.macro, "(", params, ") PROBEKIT_GEN_V1_PLAIN(", nm.fn, ")(", params, ")");
    out.line("#define ", nm.macro, "_GATED(", params, ") PROBEKIT_GEN_V1_IF_ENABLED(", nm.sem, ", PROBEKIT_GEN_V1_GATED(",
             nm.fn, ")(", params, "))");
}

// C++: fire<Gated>() checks each argument against the spec with a readable
// static_assert, runs builders (reachable only through the gated form),
// converts to the spec's type, then places the site or calls slow().
void emit_cxx(Text& out, const spec::Provider& prov, const spec::Probe& p, const ProbeNames& nm, const ArityMacros& am) {
    const size_t n = std::min(p.args.size(), spec::kMaxProbeArgs);  // sema refuses more
    const auto& at = am[n];
    CxxArg args[spec::kMaxProbeArgs];
    for (size_t i = 0; i < n; ++i) args[i] = cxx_arg(p.args[i]);
    const bool all_typed = typed(p);
    out.raw("struct ", nm.fn, " { ");
    if (all_typed) {
        out.raw(at.slow, "(", prov.name, ", ", p.name);
        for (size_t i = 0; i < n; ++i) out.raw(", ", args[i].converted, ", ", sdt_size_text(p.args[i]));
        out.line(")");
    } else {
        out.line(at.slow_template, at.slow_untyped, "(", prov.name, ", ", p.name, ")");
    }
    out.line("  template <bool G", at.check_args.empty() ? "" : ", " + at.cxx_tparams, "> struct check {");
    for (size_t i = 0; i < n; ++i) {
        const spec::Arg& a = p.args[i];
        const CxxArg& c = args[i];
        const std::string type = a.type.spelling();
        out.raw("    PROBEKIT_GEN_V1_CHECK(", i + 1, ", ", c.check, ", \"", CEscaped{nm.id}, "\", \"");
        out.raw(CEscaped{spec::arg_label(a.name, i)});
        out.raw("\", \"", nm.macro, "\", \"", c.expects);
        if (!c.detail.empty()) out.raw(" (", CEscaped{c.detail}, ")");
        out.raw("; the spec declares '", CEscaped{type});
        if (!a.name.empty()) out.raw(" ", CEscaped{a.name});
        out.line("'\")");
    }
    out.line("    static constexpr bool ok = ", at.all_ok, ";");
    out.line("  };");
    // The gated form: builders forwarded, called only once the gate is open.
    out.raw("  template <", at.cxx_tparams, "> static PROBEKIT_GEN_V1_AI void fire(", at.cxx_fparams, ") { ");
    out.raw("if constexpr (check<true", at.check_args, ">::ok) { ", at.call, "(");
    for (size_t i = 0; i < n; ++i) out.raw(i ? ", " : "", args[i].convert);
    out.line(") } }");
    // The plain form: an inline site. Strings by reference (a std::string is
    // not copied), everything else by value.
    out.raw("  template <", at.cxx_tparams, "> static PROBEKIT_GEN_V1_AI void plain(");
    for (size_t i = 0; i < n; ++i) {
        const std::string k = std::to_string(i + 1);
        const bool by_ref = p.args[i].resolved.kind == ArgKind::String;
        out.raw(i ? ", " : "", by_ref ? "const T" + k + " &a" + k : "T" + k + " a" + k);
    }
    out.raw(") { if constexpr (check<false", at.check_args, ">::ok) { ", all_typed ? at.fire : at.fire_untyped, "(",
            prov.name, ", ", p.name);
    for (size_t i = 0; i < n; ++i) {
        out.raw(", ", args[i].convert);
        if (all_typed) out.raw(", ", sdt_size_text(p.args[i]));
    }
    out.line(") } }");
    out.line("};");
    if (!typed(p)) {
        const std::string& params = at.params;
        out.line("#define ", nm.macro, "(", params, ") ", nm.fn, "::plain(", params, ")");
        out.line("#define ", nm.macro, "_GATED(", params, ") PROBEKIT_GEN_V1_IF_ENABLED(", nm.sem, ", ", nm.fn,
                 "::fire(", params, "))");
    }
}

void emit_c_typed(Text& out, const spec::Provider& prov, const spec::Probe& p, const ArityMacros& am) {
    out.raw(am[p.args.size()].c_functions, "(", prov.name, ", ", p.name);
    for (const auto& a : p.args) out.raw(", ", c_param_type(a), ", ", c_convert(a), ", ", sdt_size_text(a));
    out.line(")");
}

// Some argument types are unknown to probekit: untyped, as sys/sdt.h, and
// always inline (no function can take them). A struct by value is a compile
// error that says so.
void emit_c_untyped(Text& out, const spec::Provider& prov, const spec::Probe& p, const ProbeNames& nm,
                    const MarkerBackend& marker) {
    const size_t n = p.args.size();
    std::vector<SiteArg> args;
    std::string checks;
    for (size_t i = 0; i < n; ++i) {
        const std::string a = "(arg" + std::to_string(i + 1) + ")";
        args.push_back({a, "PROBEKIT_ARGSIZE(" + a + ")"});
        checks += "_Static_assert(__builtin_classify_type" + a + " != 12 && __builtin_classify_type" + a +
                  " != 13 && (__builtin_classify_type" + a + " == 5 || sizeof" + a + " <= 8), \"" +
                  c_escape(nm.id + ": argument " + std::to_string(i + 1) + " '" + spec::arg_label(p.args[i].name, i) +
                           "' must be a scalar of at most 8 bytes") + "\"); ";
    }
    const std::string site = marker.site({prov.name, p.name, false, false, args});
    const std::string params = numbered("arg", n);
    out.line("#define ", nm.macro, "(", params, ") do { ", checks, site, "; } while (0)");
    out.line("#define ", nm.macro, "_GATED(", params, ") do { ", checks, "if (", nm.macro, "_ENABLED()) ", site, "; } while (0)");
}

// Every probe's .note.probekit entry and runtime descriptor, as top-level
// asm: once per unit, not text in every site (compile time, docs/
// benchmarks.md section 2). So every object that includes the header
// describes all of the spec's probes; readers ignore descriptions without a
// site, and the runtime never sees a hit for them.
void emit_metadata(Text& out, const spec::Spec& spec) {
    out.line("#if PROBEKIT_NATIVE_MARKER");
    for (const auto& prov : spec.providers)
        for (const auto& p : prov.probes) out.line("__asm__(", spec::meta_macro_name(prov.name, p.name), ");");
    out.line("#endif");
}

void emit_gates(Text& out, const spec::Spec& spec, const MarkerBackend& marker) {
    out.line("#ifdef __cplusplus");
    out.line("extern \"C\" {");
    out.line("#endif");
    for (const auto& prov : spec.providers)
        for (const auto& p : prov.probes) {
            out.line("PROBEKIT_GEN_V1_GATE(", spec::semaphore_name(prov.name, p.name), ");");
            // The runtime descriptor, defined by the top-level asm (emit_metadata).
            if (marker.writes_metadata()) out.line("PROBEKIT_GEN_V1_DESC(", prov.name, ", ", p.name, ");");
        }
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

namespace {

void emit_header(Text& out, const spec::Spec& spec, const MarkerBackend& marker, const HeaderOptions& options) {
    size_t probes = 0;
    bool arity_used[spec::kMaxProbeArgs + 1] = {}, untyped_arity_used[spec::kMaxProbeArgs + 1] = {};
    for (const auto& prov : spec.providers) {
        probes += prov.probes.size();
        for (const auto& p : prov.probes) {
            const size_t n = std::min(p.args.size(), spec::kMaxProbeArgs);
            if (typed(p)) arity_used[n] = true;
            else untyped_arity_used[n] = true;
        }
    }
    const std::string guard = options.guard.empty() ? guard_from_path(spec.path + ".h") : options.guard;
    out.line("/* Generated by probekit compile from ", comment_safe(options.source_name.empty() ? spec.path : options.source_name),
             ". Do not edit. */");
    out.line("#ifndef ", guard);
    out.line("#define ", guard, " 1");
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
    if (marker.writes_metadata()) out.raw(probekit_note_macros(), kRuntimeHook);
    const ArityMacros arity(marker);
    for (size_t n = 0; n <= spec::kMaxProbeArgs; ++n) {
        if (arity_used[n]) arity.define(out, n);
        if (untyped_arity_used[n]) arity.define_untyped(out, n);
        if (arity_used[n] || untyped_arity_used[n]) arity.define_call(out, n);
    }
    out.line("");
    emit_gates(out, spec, marker);
    std::vector<ProbeNames> names;
    names.reserve(probes);
    for (const auto& prov : spec.providers)
        for (const auto& p : prov.probes) {
            names.push_back(names_of(prov, p));
            emit_common(out, prov, p, names.back(), marker, arity);
        }
    if (marker.writes_metadata()) emit_metadata(out, spec);
    out.line("");
    out.line("#ifdef __cplusplus");
    out.line("extern \"C++\" {");
    const ProbeNames* nm = names.data();
    for (const auto& prov : spec.providers)
        for (const auto& p : prov.probes) emit_cxx(out, prov, p, *nm++, arity);
    out.line("} /* extern \"C++\" */");
    out.line("#else");
    out.line("#pragma GCC diagnostic push");
    out.line("#pragma GCC diagnostic ignored \"-Wattributes\" /* inline and noinline: see the C functions above */");
    nm = names.data();
    for (const auto& prov : spec.providers)
        for (const auto& p : prov.probes) {
            if (typed(p)) emit_c_typed(out, prov, p, arity);
            else emit_c_untyped(out, prov, p, *nm, marker);
            ++nm;
        }
    out.line("#pragma GCC diagnostic pop");
    out.line("#endif");
    out.line("");
    out.line("#endif /* ", guard, " */");
}

}  // namespace

std::string native_header(const spec::Spec& spec, const MarkerBackend& marker, const HeaderOptions& options) {
    Text out;
    emit_header(out, spec, marker, options);
    return out.take();
}

void write_native_header(const spec::Spec& spec, const MarkerBackend& marker, const HeaderOptions& options,
                         const std::function<void(std::string_view)>& sink) {
    Text out(sink);
    emit_header(out, spec, marker, options);
    out.flush();
}

}  // namespace probekit::codegen
