#include <catch2/catch.hpp>

#include "spec_helpers.h"

using namespace probekit;
using probekit::test::load;
using spec::ArgKind;

namespace {
spec::Arg only_arg(const std::string& decl, probekit::test::Loaded& l) {
    l = load("provider p { probe a(" + decl + "); };");
    REQUIRE(l.spec);
    return l.spec->providers[0].probes[0].args.at(0);
}
}  // namespace

TEST_CASE("types: builtin combinations resolve to kind, C type and size") {
    struct Case {
        const char* decl;
        ArgKind kind;
        const char* c_type;
        int size;
    };
    const Case cases[] = {
        {"int", ArgKind::SignedInt, "int", 4},
        {"unsigned", ArgKind::UnsignedInt, "unsigned int", 4},
        {"short int", ArgKind::SignedInt, "short", 2},
        {"unsigned short", ArgKind::UnsignedInt, "unsigned short", 2},
        {"long", ArgKind::SignedInt, "long", 8},
        {"long long int", ArgKind::SignedInt, "long long", 8},
        {"unsigned long long", ArgKind::UnsignedInt, "unsigned long long", 8},
        {"char", ArgKind::Char, "char", 1},
        {"signed char", ArgKind::SignedInt, "signed char", 1},
        {"char unsigned", ArgKind::UnsignedInt, "unsigned char", 1},
        {"bool", ArgKind::Bool, "_Bool", 1},
        {"float", ArgKind::Float, "float", 4},
        {"double", ArgKind::Double, "double", 8},
        {"string", ArgKind::String, "const char *", 8},
        {"const char *", ArgKind::Pointer, "const void *", 8},
        {"void *", ArgKind::Pointer, "const void *", 8},
        {"const double*", ArgKind::Pointer, "const void *", 8},
        {"uint16_t", ArgKind::UnsignedInt, "uint16_t", 2},
        {"int64_t", ArgKind::SignedInt, "int64_t", 8},
        {"size_t", ArgKind::UnsignedInt, "size_t", 8},
        {"pid_t", ArgKind::SignedInt, "pid_t", 4},
        {"zoneid_t", ArgKind::SignedInt, "int", 4},
        {"enum color", ArgKind::SignedInt, "int", 4},
        {"struct conn *", ArgKind::Pointer, "const void *", 8},
        {"Tcl_Obj **", ArgKind::Pointer, "const void *", 8},
    };
    for (const auto& c : cases) {
        INFO(c.decl);
        probekit::test::Loaded l;
        auto a = only_arg(c.decl, l);
        CHECK(a.resolved.kind == c.kind);
        CHECK(a.resolved.c_type == c.c_type);
        CHECK(a.resolved.size == c.size);
        CHECK(l.diags.all().empty());
    }
}

TEST_CASE("types: typedef chains and #define aliases are followed") {
    auto l = load(R"(
typedef int64_t ngx_int_t;
typedef uint64_t ngx_uint_t;
typedef ngx_uint_t ngx_msec_t;
typedef const char* Str;
#define Type3 char *
typedef struct Tcl_Obj Tcl_Obj;
provider p { probe a(ngx_int_t, ngx_msec_t, Str, Type3, Tcl_Obj *); };
)");
    REQUIRE(l.spec);
    const auto& a = l.spec->providers[0].probes[0].args;
    CHECK(a[0].resolved.c_type == "int64_t");
    CHECK(a[1].resolved.c_type == "uint64_t");
    CHECK(a[2].resolved.kind == ArgKind::Pointer);
    CHECK(a[3].resolved.kind == ArgKind::Pointer);
    CHECK(a[4].resolved.kind == ArgKind::Pointer);
}

TEST_CASE("types: invalid spellings are errors at the type's place") {
    struct Case {
        const char* decl;
        const char* error;
    };
    const Case cases[] = {
        {"unsigned double", "'unsigned double' is not a valid type"},
        {"short long", "'short long' is not a valid type"},
        {"long long long", "'long long long' is not a valid type"},
        {"void x", "'void' cannot be the type of an argument (use 'void *', or '()' for no arguments)"},
        {"int x, void", "'void' cannot be the type of an argument (use 'void *', or '()' for no arguments)"},
        {"long double", "'long double' is wider than 8 bytes and cannot be a probe argument"},
        {"string *", "'string' is already a pointer to text; 'string *' is not a valid type"},
        {"signed float", "'signed float' is not a valid type"},
        {"char int", "'char int' is not a valid type"},
    };
    for (const auto& c : cases) {
        INFO(c.decl);
        auto l = load(std::string("provider p { probe a(") + c.decl + "); };");
        CHECK_FALSE(l.spec);
        REQUIRE(l.diags.has_errors());
        CHECK(l.diags.all()[0].message == c.error);
        CHECK(l.diags.all()[0].loc.line == 1);
    }
}

TEST_CASE("types: unknown names and structs by value are untyped, with a warning") {
    auto l = load("provider p { probe a(value v, struct astruct s, mystery *m); };");
    REQUIRE(l.spec);
    const auto& a = l.spec->providers[0].probes[0].args;
    CHECK(a[0].resolved.kind == ArgKind::Opaque);
    CHECK(a[1].resolved.kind == ArgKind::Opaque);
    CHECK(a[2].resolved.kind == ArgKind::Pointer);
    REQUIRE(l.diags.all().size() == 2);
    CHECK(l.diags.all()[0].format() ==
          "t.d:1:22: warning: unknown type 'value': the argument is left untyped (declare it with typedef or #define, e.g. '#define value int')");
    CHECK(l.diags.all()[1].message.find("'struct astruct' is passed by value") == 0);
}

TEST_CASE("types: --Werror turns the warnings into errors") {
    probekit::spec::Diagnostics d;
    d.set_warnings_are_errors(true);
    auto spec = probekit::spec::load_text("provider p { probe a(value); };", "w.d", d);
    CHECK_FALSE(spec);
    CHECK(d.all()[0].format().find("w.d:1:22: error: unknown type 'value'") == 0);
}

TEST_CASE("types: an alias that refers to itself is an error, not a hang") {
    auto l = load("#define A B\n#define B A\nprovider p { probe a(A); };");
    CHECK_FALSE(l.spec);
    CHECK(l.messages().find("type aliases nest too deeply") != std::string::npos);
}
