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

TEST_CASE("native header: gate, typed C wrapper and C++ checks") {
    auto l = load("provider app {\n/** Starts. */\nprobe req__start(int fd, string path, double t);\n};", "app.d");
    REQUIRE(l.spec);
    std::string h = codegen::native_header(*l.spec, codegen::SysSdtMarker{}, {});
    CHECK(h.find("#ifndef PROBEKIT_APP_D_H") != std::string::npos);
    CHECK(h.find("volatile unsigned int app_req__start_semaphore;") != std::string::npos);
    CHECK(h.find("__weak__, __visibility__(\"hidden\"), __section__(\".probes\")") != std::string::npos);
    CHECK(h.find("#define APP_REQ_START_ENABLED() (__builtin_expect(app_req__start_semaphore != 0, 0))") != std::string::npos);
    CHECK(h.find("void probekit_app_req__start(int probekit_arg1, const char * probekit_arg2, double probekit_arg3)") != std::string::npos);
    CHECK(h.find("STAP_PROBE3(app, req__start, probekit_arg1, probekit_arg2, probekit_gen_v1_f64_bits(probekit_arg3))") != std::string::npos);
    CHECK(h.find("app:req__start: argument 2 'path' must be a NUL-terminated string") != std::string::npos);
    CHECK(h.find("#define APP_REQ_START_GATED(arg1, arg2, arg3) do { if (APP_REQ_START_ENABLED())") != std::string::npos);
    CHECK(h.find(" * Starts.") != std::string::npos);
}

TEST_CASE("native header: probes with untyped arguments fall back to sys/sdt.h in C") {
    auto l = load("provider p { probe a(value v); };");
    REQUIRE(l.spec);
    std::string h = codegen::native_header(*l.spec, codegen::SysSdtMarker{}, {});
    CHECK(h.find("#define P_A(arg1) STAP_PROBE1(p, a, (arg1))") != std::string::npos);
}

TEST_CASE("native header: a doc comment cannot end the generated comment") {
    auto l = load("provider p { /** a */ b */ probe a(); };");
    // `b */` after the doc is a syntax error in the spec itself.
    CHECK_FALSE(l.spec);
    auto l2 = load("provider p { /** x*\\/y */ probe a(); };");
    REQUIRE(l2.spec);
    std::string h = codegen::native_header(*l2.spec, codegen::SysSdtMarker{}, {});
    CHECK(h.find("x*\\/y") != std::string::npos);
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
