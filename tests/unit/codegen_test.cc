#include <catch2/catch.hpp>

#include "codegen/dtrace_compat.h"
#include "codegen/json_manifest.h"
#include "codegen/native_header.h"
#include "spec/names.h"
#include "spec_helpers.h"

using namespace probekit;
using probekit::test::load;

TEST_CASE("names: SystemTap's macro and semaphore mapping") {
    CHECK(spec::macro_name("app", "req__start") == "APP_REQ_START");
    CHECK(spec::macro_name("hotspot", "AllocObject__entry") == "HOTSPOT_ALLOCOBJECT_ENTRY");
    CHECK(spec::semaphore_name("app", "req__start") == "app_req__start_semaphore");
    CHECK(spec::display_name("gc_major__start") == "gc_major-start");
}

TEST_CASE("native header: gate, typed C wrappers and C++ checks") {
    auto l = load("provider app {\n/** Starts. */\nprobe req__start(int fd, string path, double t);\n};", "app.d");
    REQUIRE(l.spec);
    std::string h = codegen::native_header(*l.spec, codegen::NativeMarker{}, {});
    auto has = [&](const std::string& text) { return h.find(text) != std::string::npos; };
    CHECK(has("#ifndef PROBEKIT_included_app_d_h_guard"));
    CHECK(has("#ifndef PROBEKIT_MARKER_V1"));  // the marker is embedded
    CHECK(has("__weak__, __visibility__(\"hidden\"), __section__(\".probes\"), __aligned__(4), __used__)) volatile unsigned int sem"));
    CHECK(has("\nPROBEKIT_GEN_V1_GATE(app_req__start_semaphore);\n"));
    CHECK(has("#define PROBEKIT_GEN_V1_ENABLED(sem) (__builtin_expect(PROBEKIT_GEN_V1_LOAD(sem) != 0, 0))"));
    CHECK(has("#define APP_REQ_START_ENABLED() PROBEKIT_GEN_V1_ENABLED(app_req__start_semaphore)"));
    // Both languages share the probe's macros; what they expand to differs.
    CHECK(has("#define APP_REQ_START(arg1, arg2, arg3) PROBEKIT_GEN_V1_PLAIN(probekit_app_req__start)(arg1, arg2, arg3)"));
    CHECK(has("#define APP_REQ_START_GATED(arg1, arg2, arg3) PROBEKIT_GEN_V1_IF_ENABLED(app_req__start_semaphore, "
              "PROBEKIT_GEN_V1_GATED(probekit_app_req__start)(arg1, arg2, arg3))"));
    // x86-64: the gate is tested in asm goto (one load, no C branch on it).
    CHECK(has("__asm__ goto(\"cmpl $0, %0\\n\\tjne %l1\" : : \"m\"(sem) : : probekit_gen_v1_on_##n);"));
    // C: an inline site with a 1-byte NOP and an out-of-line one with a
    // 5-byte NOP, defined once per arity; each probe names its types and
    // their sdt sizes, as text.
    CHECK(has("\nPROBEKIT_GEN_V1_N_C3(app, req__start, int, , -4, const char *, , 8, double, probekit_gen_v1_f64_bits, 8)\n"));
    CHECK(has("void probekit_##prov##_##name(t1 probekit_arg1, t2 probekit_arg2, t3 probekit_arg3) { \\\n"
              "    PROBEKIT_SITE3(PROBEKIT_NOP1, prov, name, f1(probekit_arg1), z1, f2(probekit_arg2), z2, "));
    CHECK(has("static __inline__ __attribute__((PROBEKIT_GEN_V1_OUT_OF_LINE, __unused__)) void probekit_##prov##_##name##_slow(t1 probekit_arg1"));
    // C++: checks with the spec's words, hidden out-of-line site.
    CHECK(has("PROBEKIT_GEN_V1_CHECK(2, ok_string, \"app:req__start\", \"path\", \"APP_REQ_START\", \"a NUL-terminated string"));
    // The plain form: numbers by value, strings by reference, converted by
    // casts; the gated form forwards (builders) and converts in the call.
    CHECK(has("static PROBEKIT_GEN_V1_AI void plain(T1 a1, const T2 &a2, T3 a3) { if constexpr (check<false, T1, T2, T3>::ok) { "
              "PROBEKIT_GEN_V1_N_FIRE3(app, req__start, static_cast<int>, -4, ::probekit_gen_v1::to_string, 8, PROBEKIT_GEN_V1_F64, 8) } }"));
    CHECK(has("static PROBEKIT_GEN_V1_AI void fire(T1 &&a1, T2 &&a2, T3 &&a3) { if constexpr (check<true, T1, T2, T3>::ok) { "
              "PROBEKIT_GEN_V1_N_CALL3(static_cast<int>, ::probekit_gen_v1::to_string, PROBEKIT_GEN_V1_F64) } }"));
    CHECK(has("#define PROBEKIT_GEN_V1_N_CALL3(cv1, cv2, cv3) slow(cv1(::probekit_gen_v1::value(static_cast<T1 &&>(a1))), "));
    CHECK(has("#define PROBEKIT_GEN_V1_N_SLOW3(prov, name, C1, z1, C2, z2, C3, z3) "
              "static __attribute__((PROBEKIT_GEN_V1_OUT_OF_LINE, __visibility__(\"hidden\"))) void slow(C1 c1, C2 c2, C3 c3)"));
    // The gated form's slow() takes the converted types: one function, not a template.
    CHECK(has("struct probekit_app_req__start { PROBEKIT_GEN_V1_N_SLOW3(app, req__start, int, -4, const char *, 8, unsigned long long, 8)\n"));
    // Out-of-line sites hand the probe to in-process listeners (weakly).
    CHECK(has("); PROBEKIT_GEN_V1_DISPATCH(prov, name, (unsigned long long)(c1), (unsigned long long)(c2), (unsigned long long)(c3)); }"));
    CHECK(has("extern void probekit_dispatch_v1(struct probekit_probe_v1 *, const unsigned long long *) __attribute__((__weak__));"));
    CHECK(has("\nPROBEKIT_GEN_V1_DESC(app, req__start);\n"));
    CHECK(has("struct probekit_probe_v1 {"));  // the runtime ABI is embedded
    CHECK(has(" * Starts."));
    // The metadata note, with the doc text, as top-level asm (once per unit).
    CHECK(has("#define PROBEKIT_META_app_req__start PROBEKIT_GEN_V1_META(app, req__start, 3, "
              "PROBEKIT_GEN_V1_META_ARG(1, -4, \"fd\", \"int\") PROBEKIT_GEN_V1_META_ARG(8, 8, \"path\", \"string\") "
              "PROBEKIT_GEN_V1_META_ARG(6, 8, \"t\", \"double\") , \"Starts.\")"));
    CHECK(has("\n#if PROBEKIT_NATIVE_MARKER\n__asm__(PROBEKIT_META_app_req__start);\n#endif\n"));
}

TEST_CASE("native header: untyped arguments stay untyped in C, and a struct is a clear error") {
    auto l = load("provider p { probe a(value v); };");
    REQUIRE(l.spec);
    std::string h = codegen::native_header(*l.spec, codegen::NativeMarker{}, {});
    CHECK(h.find("#define P_A(arg1) do { _Static_assert(__builtin_classify_type(arg1) != 12") != std::string::npos);
    CHECK(h.find("\"p:a: argument 1 'v' must be a scalar of at most 8 bytes\"); PROBEKIT_SITE1_EXPR(PROBEKIT_NOP1, p, a, (arg1), PROBEKIT_ARGSIZE((arg1))); } while (0)") != std::string::npos);
    CHECK(h.find("#define P_A(arg1) probekit_p_a::plain(arg1)") != std::string::npos);
    CHECK(h.find("struct probekit_p_a { template <class C1> PROBEKIT_GEN_V1_N_SLOWX1(p, a)\n") != std::string::npos);
    // Untyped: the size is the compiler's, and the note says 0.
    CHECK(h.find("PROBEKIT_SITE1_EXPR(PROBEKIT_NOP1, prov, name, cv1(a1), ::probekit_gen_v1::sdt_size<decltype(cv1(a1))>());") != std::string::npos);
    CHECK(h.find("PROBEKIT_GEN_V1_META_ARG(0, 0, \"v\", \"value\")") != std::string::npos);
}

TEST_CASE("native header: the sys/sdt.h backend writes STAP_PROBEn sites") {
    auto l = load("provider p { probe a(int x); };");
    REQUIRE(l.spec);
    std::string h = codegen::native_header(*l.spec, codegen::SysSdtMarker{}, {});
    CHECK(h.find("#include <sys/sdt.h>") != std::string::npos);
    CHECK(h.find("STAP_PROBE1(prov, name, f1(probekit_arg1))") != std::string::npos);
    CHECK(h.find("PROBEKIT_GEN_V1_S_C1(p, a, int, , -4)") != std::string::npos);
    CHECK(h.find("PROBEKIT_META_") == std::string::npos);
    CHECK(h.find("PROBEKIT_GEN_V1_DISPATCH") == std::string::npos);  // no descriptors, no listeners
}

TEST_CASE("native header: doc text cannot break the comment, the string or the asm") {
    auto l = load("provider p { /** x*\\/y \"q\" 100% {a|b} ?\?= */ probe a(); };");
    REQUIRE(l.spec);
    std::string h = codegen::native_header(*l.spec, codegen::NativeMarker{}, {});
    CHECK(h.find(" * x*\\/y \"q\" 100% {a|b} ?\?=") != std::string::npos);  // comment: as written
    // asm: basic (top-level) asm, where % and braces are plain text; the
    // gas string escapes, then the C string escapes.
    CHECK(h.find(R"(x*\\\\/y \\\"q\\\" 100% {a|b} \?\?=)") != std::string::npos);
}

TEST_CASE("dtrace-compatible header keeps SystemTap's shape") {
    auto l = load("provider postgresql { probe transaction__start(LocalTransactionId); probe plan(); };");
    REQUIRE(l.spec);
    std::string h = codegen::dtrace_header(*l.spec);
    CHECK(h.find("#define _SDT_HAS_SEMAPHORES 1") != std::string::npos);
    CHECK(h.find("/* POSTGRESQL_TRANSACTION_START ( LocalTransactionId ) */") != std::string::npos);
    CHECK(h.find("__extension__ extern unsigned short postgresql_transaction__start_semaphore __attribute__ ((unused)) __attribute__ ((section (\".probes\")));") != std::string::npos);
    CHECK(h.find("#define POSTGRESQL_TRANSACTION_START(arg1) \\\nDTRACE_PROBE1 (postgresql, transaction__start, arg1)") != std::string::npos);
    CHECK(h.find("#define POSTGRESQL_PLAN() \\\nDTRACE_PROBE (postgresql, plan)") != std::string::npos);
    CHECK(h.find("_ENABLED() __builtin_expect (*(volatile unsigned short *) &postgresql_transaction__start_semaphore, 0)") != std::string::npos);
    std::string c = codegen::dtrace_semaphore_source(*l.spec);
    CHECK(c.find("__extension__ unsigned short postgresql_plan_semaphore __attribute__ ((unused)) __attribute__ ((section (\".probes\"))) __attribute__ ((visibility (\"hidden\")));") != std::string::npos);
}

TEST_CASE("json manifest lists probes with resolved types") {
    auto l = load("provider app { /** Doc. */ probe req__start(int fd, string path); };", "app.d");
    REQUIRE(l.spec);
    std::string j = codegen::json_manifest(*l.spec);
    CHECK(j.find("\"display_name\": \"req-start\"") != std::string::npos);
    CHECK(j.find("\"kind\": \"string\"") != std::string::npos);
    CHECK(j.find("\"doc\": \"Doc.\"") != std::string::npos);
}
