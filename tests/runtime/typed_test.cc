// The C++ API: typed callbacks, the generic event view, RAII listeners.
#include <catch2/catch.hpp>

#include <probekit/runtime.hpp>

#include <cstdint>
#include <string>
#include <string_view>

#include "hand_probes.h"

using hand::Object;

namespace {

enum class Color : std::uint8_t { red = 1, blue = 200 };

Object typed_object() {
  return Object{
      {"typed", "ints",
       {{PROBEKIT_ARG_SIGNED, -4, "neg", "int"},
        {PROBEKIT_ARG_SIGNED, -1, "i8", "int8_t"},
        {PROBEKIT_ARG_UNSIGNED, 2, "u16", "uint16_t"},
        {PROBEKIT_ARG_SIGNED, -8, "big", "int64_t"},
        {PROBEKIT_ARG_UNSIGNED, 8, "ubig", "uint64_t"},
        {PROBEKIT_ARG_CHAR, -1, "c", "char"},
        {PROBEKIT_ARG_UNSIGNED, 1, "color", "uint8_t"}}},
      {"typed", "misc",
       {{PROBEKIT_ARG_POINTER, 8, "p", "struct conn *"},
        {PROBEKIT_ARG_STRING, 8, "s", "string"},
        {PROBEKIT_ARG_BOOL, 1, "b", "bool"},
        {PROBEKIT_ARG_FLOAT, 4, "f", "float"},
        {PROBEKIT_ARG_DOUBLE, 8, "d", "double"},
        {PROBEKIT_ARG_STRING, 8, "s2", "const char *"}},
       "Miscellaneous."},
      {"typed", "two", {{PROBEKIT_ARG_SIGNED, -4, "fd", "int"}, {PROBEKIT_ARG_STRING, 8, "path", "string"}}},
  };
}

struct conn {
  int id;
};

}  // namespace

TEST_CASE("typed callbacks receive converted values", "[cxx]") {
  Object o = typed_object();
  o.load();
  int calls = 0;
  {
    auto l = probekit::listen<int, std::int8_t, std::uint16_t, long long, std::uint64_t, char, Color>(
        o[0], [&](int neg, std::int8_t i8, std::uint16_t u16, long long big, std::uint64_t ubig, char c, Color color) {
          ++calls;
          CHECK(neg == -123456);
          CHECK(i8 == -7);
          CHECK(u16 == 65535);
          CHECK(big == INT64_MIN);
          CHECK(ubig == UINT64_MAX);
          CHECK(c == 'x');
          CHECK(color == Color::blue);
        });
    REQUIRE(l.status() == PROBEKIT_OK);
    REQUIRE(l);
    CHECK(hand::fire(o[0], -123456, std::int8_t{-7}, std::uint16_t{65535}, INT64_MIN, UINT64_MAX, 'x',
                     std::uint8_t{200}));
    CHECK(calls == 1);
  }
  // The listener is gone with its scope.
  CHECK(o.gate(0) == 0);
  CHECK_FALSE(hand::fire(o[0], 0, 0, 0, 0, 0, 0, 0));

  conn c{3};
  std::string text = "hello";
  calls = 0;
  auto l = probekit::listen<conn *, const char *, bool, float, double, std::string_view>(
      o[1], [&](conn *p, const char *s, bool b, float f, double d, std::string_view s2) {
        ++calls;
        CHECK(p == &c);
        CHECK(p->id == 3);
        CHECK(std::string(s) == "hello");
        CHECK(b);
        CHECK(f == -1.5f);
        CHECK(d == 6.02214076e23);
        CHECK(s2 == "world");
      });
  REQUIRE(l.status() == PROBEKIT_OK);
  hand::fire(o[1], &c, text.c_str(), true, -1.5f, 6.02214076e23, "world");
  CHECK(calls == 1);
  l.reset();

  // Wider types are fine: double from a float, int64 from int, uintptr_t from a pointer.
  auto w = probekit::listen<std::uintptr_t, const void *, int, double, double, const char *>(
      o[1], [&](std::uintptr_t p, const void *, int b, double f, double, const char *) {
        CHECK(p == reinterpret_cast<std::uintptr_t>(&c));
        CHECK(b == 1);
        CHECK(f == -1.5);
      });
  REQUIRE(w.status() == PROBEKIT_OK);
  hand::fire(o[1], &c, text.c_str(), true, -1.5f, 0.0, "");
  o.unload();
}

TEST_CASE("typed callbacks whose types do not fit are refused", "[cxx]") {
  Object o = typed_object();
  o.load();
  auto nop = [](auto...) {};
  // Arity.
  CHECK(probekit::listen<int>(o[2], nop).status() == PROBEKIT_E_TYPE);
  CHECK(probekit::listen<int, const char *, int>(o[2], nop).status() == PROBEKIT_E_TYPE);
  // Kinds and sizes.
  CHECK(probekit::listen<unsigned, const char *>(o[2], nop).status() == PROBEKIT_E_TYPE);   // signed -> unsigned
  CHECK(probekit::listen<short, const char *>(o[2], nop).status() == PROBEKIT_E_TYPE);      // 4 bytes -> 2
  CHECK(probekit::listen<int, int>(o[2], nop).status() == PROBEKIT_E_TYPE);                 // string -> int
  CHECK(probekit::listen<int, conn *>(o[2], nop).status() == PROBEKIT_E_TYPE);              // string -> struct pointer
  CHECK(probekit::listen<double, const char *>(o[2], nop).status() == PROBEKIT_E_TYPE);     // int -> double
  CHECK(probekit::listen<conn *, const char *, bool, double, float, const char *>(o[1], nop).status() ==
        PROBEKIT_E_TYPE);  // double -> float
  CHECK(probekit::listen<conn *, const char *, int, float, double, int>(o[1], nop).status() ==
        PROBEKIT_E_TYPE);  // string -> int
  CHECK(probekit::listen<int, std::int8_t, std::int16_t, long long, std::uint64_t, char, Color>(o[0], nop).status() ==
        PROBEKIT_E_TYPE);  // uint16 -> int16
  CHECK(probekit::listen<long, const char *>("typed", "nope", nop).status() == PROBEKIT_E_NO_PROBE);
  // Nothing was left registered by the refusals.
  CHECK(o.gate(0) == 0);
  CHECK(o.gate(1) == 0);
  CHECK(o.gate(2) == 0);
  // These fit.
  CHECK(probekit::listen<long, const char *>("typed", "two", nop).status() == PROBEKIT_OK);
  CHECK(probekit::listen<int, std::string_view>(o[2], nop).status() == PROBEKIT_OK);
  CHECK(probekit::listen<int, const void *>(o[2], nop).status() == PROBEKIT_OK);
  o.unload();
}

TEST_CASE("the generic callback sees each argument's kind, name, type and value", "[cxx]") {
  Object o = typed_object();
  o.load();
  int calls = 0;
  auto l = probekit::listen(o[1], [&](const probekit::event &e) {
    ++calls;
    CHECK(e.provider() == "typed");
    CHECK(e.name() == "misc");
    CHECK(std::string(e.probe().doc) == "Miscellaneous.");
    REQUIRE(e.size() == 6);
    CHECK(e[0].kind() == PROBEKIT_ARG_POINTER);
    CHECK(e[0].type() == "struct conn *");
    CHECK(e[0].pointer() == nullptr);
    CHECK(e[1].kind() == PROBEKIT_ARG_STRING);
    CHECK(e[1].name() == "s");
    CHECK(e[1].str() == "text");
    CHECK(e[2].u64() == 0);
    CHECK(e[3].as_float() == 0.25f);
    CHECK(e[3].as_double() == 0.25);
    CHECK(e[4].as_double() == -2.5);
    CHECK(e[5].str().empty());  // a null string reads as ""
    CHECK(e[2].str().empty());  // not a string
    // The C helpers agree.
    const probekit_event &raw = e.raw();
    CHECK(probekit_arg_double(&raw, 3) == 0.25);
    CHECK(probekit_arg_double(&raw, 4) == -2.5);
    CHECK(std::string(probekit_arg_string(&raw, 1)) == "text");
    CHECK(probekit_arg_string(&raw, 0) == nullptr);
  });
  REQUIRE(l.status() == PROBEKIT_OK);
  hand::fire(o[1], nullptr, "text", false, 0.25f, -2.5, static_cast<const char *>(nullptr));
  CHECK(calls == 1);
  o.unload();
}

TEST_CASE("listeners move, reset, and outlive their object safely", "[cxx]") {
  Object o = typed_object();
  o.load();
  int calls = 0;
  probekit::listener kept;
  CHECK_FALSE(kept);
  {
    auto l = probekit::listen<int, const char *>(o[2], [&](int, const char *) { ++calls; });
    REQUIRE(l);
    kept = std::move(l);
    CHECK_FALSE(l);
  }
  hand::fire(o[2], 1, "a");
  CHECK(calls == 1);
  CHECK(kept.reset() == PROBEKIT_OK);
  CHECK_FALSE(kept);
  CHECK_FALSE(hand::fire(o[2], 1, "a"));

  // A listener whose object unloads first: its destructor finds no probe and
  // still releases the function object (ASan/LSan check the release).
  auto orphan = probekit::listen<int, const char *>(o[2], [s = std::string(100, 'x')](int, const char *) {});
  REQUIRE(orphan);
  o.unload();
  CHECK(orphan.reset() == PROBEKIT_E_NO_PROBE);
}
