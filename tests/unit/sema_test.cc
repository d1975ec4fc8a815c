#include <catch2/catch.hpp>

#include "spec_helpers.h"

using probekit::test::load;

TEST_CASE("sema: duplicates, too many arguments and generated-name collisions") {
    struct Case {
        const char* text;
        const char* error;
    };
    const Case cases[] = {
        {"provider p { probe a(); };\nprovider p { probe b(); };", "t.d:2:1: error: provider 'p' is declared twice (first at t.d:1)"},
        {"provider p {\n probe a();\n probe a(int);\n};", "t.d:3:2: error: probe 'a' is declared twice in provider 'p' (first at t.d:2)"},
        {"provider p { probe a(int,int,int,int,int,int,int,int,int,int,int,int,int); };",
         "t.d:1:14: error: probe 'p:a' has 13 arguments; at most 12 are supported (the limit of sys/sdt.h and of libbpf's USDT reader)"},
        {"provider p {\n probe a__b();\n probe a_b();\n};", "t.d:3:2: error: 'p:a_b' and 'p:a__b' (t.d:2) both generate 'P_A_B'; rename one of them"},
        {"provider p {\n probe x();\n probe x__enabled();\n};", "t.d:3:2: error: 'p:x__enabled' and 'p:x' (t.d:2) both generate 'P_X_ENABLED'; rename one of them"},
        {"provider a_b { probe c(); };\nprovider a { probe b_c(); };", "t.d:2:14: error: 'a:b_c' and 'a_b:c' (t.d:1) both generate 'A_B_C'; rename one of them"},
        // Internals of the generated header (found by the fuzzer's review).
        {"provider probekit_a { probe b(int x); };\nprovider a { probe b_semaphore(int y); };",
         "t.d:2:14: error: 'a:b_semaphore' and 'probekit_a:b' (t.d:1) both generate 'probekit_a_b_semaphore'; rename one of them"},
        {"provider gen { probe v1(); };", "t.d:1:16: error: 'gen:v1' would generate 'probekit_gen_v1', a name reserved by probekit; rename it"},
        {"provider probekit { probe site1(); };", "t.d:1:21: error: 'probekit:site1' would generate 'PROBEKIT_SITE1', a name reserved by probekit; rename it"},
    };
    for (const auto& c : cases) {
        INFO(c.text);
        auto l = load(c.text);
        CHECK_FALSE(l.spec);
        REQUIRE(l.diags.has_errors());
        CHECK(l.diags.all()[0].format() == c.error);
    }
}

TEST_CASE("sema: twelve arguments, several providers and keyword-like names are fine") {
    auto l = load(R"(
provider a { probe free(int,int,int,int,int,int,int,int,int,int,int,int); probe main(); };
provider b { probe new(int class); };
provider probekit { probe callback__registered(); probe g_h(); };
)");
    INFO(l.messages());
    REQUIRE(l.spec);
    CHECK(l.spec->providers.size() == 3);
    CHECK(l.spec->providers[1].probes[0].args[0].name == "class");
}

TEST_CASE("sema: a repeated argument name is a warning") {
    auto l = load("provider p { probe a(char *value, unsigned long value); };");
    REQUIRE(l.spec);
    REQUIRE(l.diags.all().size() == 1);
    CHECK(l.diags.all()[0].message == "argument name 'value' is used twice in probe 'a'");
}
