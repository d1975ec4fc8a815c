#include <catch2/catch.hpp>

#include "spec_helpers.h"

using namespace probekit;
using probekit::test::load;

TEST_CASE("parser: provider with named, unnamed and void argument lists") {
    auto l = load(R"(
provider app {
    probe req__start(int fd, const char *path);
    probe tick();
    probe idle(void);
    probe raw(unsigned long long, struct conn *c, char **argv) : (int, int);
};
)");
    REQUIRE(l.spec);
    INFO(l.messages());
    const auto& p = l.spec->providers.at(0);
    CHECK(p.name == "app");
    REQUIRE(p.probes.size() == 4);
    CHECK(p.probes[0].name == "req__start");
    CHECK(p.probes[0].args[1].name == "path");
    CHECK(p.probes[0].args[1].type.spelling() == "const char *");
    CHECK(p.probes[1].args.empty());
    CHECK(p.probes[2].args.empty());
    const auto& raw = p.probes[3];
    CHECK(raw.args[0].type.spelling() == "unsigned long long");
    CHECK(raw.args[0].name.empty());
    CHECK(raw.args[1].type.spelling() == "struct conn *");
    CHECK(raw.args[2].type.pointers == 2);
    CHECK(raw.has_translated);
    CHECK(raw.translated.size() == 2);
}

TEST_CASE("parser: an identifier after a base type is the argument's name") {
    auto l = load("provider p { probe a(unsigned value, Oid, long int x, value); };");
    REQUIRE(l.spec);
    const auto& a = l.spec->providers[0].probes[0].args;
    CHECK(a[0].type.spelling() == "unsigned");
    CHECK(a[0].name == "value");
    CHECK(a[1].type.spelling() == "Oid");
    CHECK(a[1].name.empty());
    CHECK(a[2].name == "x");
    CHECK(a[3].type.spelling() == "value");
}

TEST_CASE("parser: doc comments attach to the next probe only") {
    auto l = load(R"(
/** not for a probe */
provider p {
    /**
     * Fired when a request starts.
     * @param fd the socket
     */
    probe a(int fd);
    probe b();
};
)");
    REQUIRE(l.spec);
    const auto& probes = l.spec->providers[0].probes;
    CHECK(probes[0].doc == "Fired when a request starts.\n@param fd the socket");
    CHECK(probes[1].doc.empty());
}

TEST_CASE("parser: pragmas are recorded, typedefs and D clauses are understood") {
    auto l = load(R"(
#pragma D attributes Evolving/Evolving/Common provider p provider
typedef struct { int dummy; } conn_t;
typedef char unsigned u8;
struct s { int a; union { int b; } u; };
enum e { A = 1, B };
extern uintptr_t sym;
dtrace:helper:ustack: /arg0/ { this->x = 'a'; }
provider p { probe a(conn_t *c, u8 v); }
)");
    INFO(l.messages());
    REQUIRE(l.spec);
    CHECK(l.spec->pragmas.size() == 1);
    CHECK(l.spec->pragmas[0].text == "D attributes Evolving/Evolving/Common provider p provider");
    const auto& a = l.spec->providers[0].probes[0].args;
    CHECK(a[0].resolved.kind == spec::ArgKind::Pointer);
    CHECK(a[1].resolved.kind == spec::ArgKind::UnsignedInt);
    CHECK(a[1].resolved.c_type == "unsigned char");
}

TEST_CASE("parser: #define type aliases apply outside conditionals only") {
    auto l = load(R"(
#define Oid unsigned int
#define bool char
#define LIMIT 10
#ifdef __APPLE__
#define string char *
#endif
provider p { probe a(Oid o, bool b, string s); };
)");
    REQUIRE(l.spec);
    const auto& a = l.spec->providers[0].probes[0].args;
    CHECK(a[0].resolved.c_type == "unsigned int");
    CHECK(a[1].resolved.kind == spec::ArgKind::Char);
    CHECK(a[2].resolved.kind == spec::ArgKind::String);
    // The conditional is reported once, as a warning.
    REQUIRE(l.diags.all().size() == 1);
    CHECK(l.diags.all()[0].message.find("'#ifdef' is not evaluated without -C") == 0);
}

TEST_CASE("parser: syntax errors are file:line:col and name what was found") {
    struct Case {
        const char* text;
        const char* error;
    };
    const Case cases[] = {
        {"provider p { probe a(int) probe b(int); };", "t.d:1:27: error: expected ';' after the declaration of probe 'a', found 'probe'"},
        {"provider p { probe a(int;", "t.d:1:25: error: missing ')' to close the arguments of probe 'a'"},
        {"provider p {\n probe a(int);\n", "t.d:1:1: error: provider 'p' is not closed: missing '}'"},
        {"provider { probe a(); };", "t.d:1:10: error: expected provider name, found '{'"},
        {"provider p { probe req-start(int); };", "t.d:1:20: error: bad identifier starting 'req-': probe names are made of letters, digits and '_' (write '__' where consumers should show '-')"},
        {"provider p { int x; };", "t.d:1:14: error: expected 'probe' or '}' in provider 'p', found 'int'"},
        {"hello world;", "t.d:1:1: error: unexpected 'hello' at top level: expected 'provider', 'typedef' or a D declaration"},
        {"provider p { probe a(int x[4]); };", "t.d:1:27: error: array arguments are not supported in probe 'a': pass a pointer"},
        {"provider p { probe a(, int); };", "t.d:1:22: error: expected an argument type in probe 'a', found ','"},
    };
    for (const auto& c : cases) {
        auto l = load(c.text);
        INFO(c.text);
        CHECK_FALSE(l.spec);
        REQUIRE(l.diags.has_errors());
        CHECK(l.diags.all()[0].format() == c.error);
    }
}
