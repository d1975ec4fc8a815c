// The tracefs side of `probekit trace` that needs no kernel: SDT operands
// as fetch arguments, and records decoded with a `format` file. (The
// kernel's side is exercised by tests/consumers/consumers_trace.py.)
#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include "elf/argspec.h"
#include "trace/event_format.h"
#include "trace/fetch_arg.h"

using namespace probekit;

namespace {
std::string fetch(const char* spec) {
    auto a = elf::parse_arg(spec, elf::Arch::X86_64);
    auto f = trace::string_fetch_arg(a);
    return f ? *f : "none";
}
}  // namespace

TEST_CASE("SDT registers map to the kernel's fetch-arg names", "[trace]") {
    CHECK(trace::kernel_register("rdi") == "di");
    CHECK(trace::kernel_register("edx") == "dx");
    CHECK(trace::kernel_register("rsp") == "sp");
    CHECK(trace::kernel_register("r9d") == "r9");
    CHECK(trace::kernel_register("r15") == "r15");
    CHECK(trace::kernel_register("r16").empty());
    CHECK(trace::kernel_register("ah").empty());
    CHECK(trace::kernel_register("xmm0").empty());
}

TEST_CASE("string arguments become kernel string fetches", "[trace]") {
    CHECK(fetch("8@%rdi") == "+0(%di):string");
    CHECK(fetch("8@%r13") == "+0(%r13):string");
    CHECK(fetch("8@16(%rsp)") == "+0(+16(%sp)):string");
    CHECK(fetch("8@-24(%rbp)") == "+0(-24(%bp)):string");
    CHECK(fetch("8@(%rax)") == "+0(+0(%ax)):string");
    // What fetch arguments cannot say: read from the process instead.
    CHECK(fetch("8@(%rax,%rbx,8)") == "none");
    CHECK(fetch("8@name(%rip)") == "none");
    CHECK(fetch("8@$0") == "none");
    CHECK(fetch("8@%fs:8") == "none");
}

TEST_CASE("a uprobe event's format file and its __data_loc strings", "[trace]") {
    const char* format =
        "name: s0\nID: 1580\nformat:\n"
        "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
        "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
        "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
        "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
        "\tfield:unsigned long __probe_ip;\toffset:8;\tsize:8;\tsigned:0;\n"
        "\tfield:__data_loc char[] a0;\toffset:16;\tsize:4;\tsigned:1;\n"
        "\tfield:__data_loc char[] a2;\toffset:20;\tsize:4;\tsigned:1;\n\n"
        "print fmt: \"(%lx) a0=\\\"%s\\\"\", REC->__probe_ip, __get_str(a0)\n";
    std::string error;
    auto fields = trace::parse_event_format(format, error);
    REQUIRE(fields);
    REQUIRE(fields->size() == 7);
    CHECK((*fields)[4].name == "__probe_ip");
    CHECK_FALSE((*fields)[4].data_loc);
    CHECK((*fields)[5].name == "a0");
    CHECK((*fields)[5].data_loc);
    CHECK((*fields)[5].offset == 16);
    CHECK((*fields)[6].name == "a2");
    CHECK((*fields)[6].offset == 20);

    // A record as the kernel writes it: a0 = "hello" (6 bytes with its
    // NUL, at 24), a2 not fetched (length 0).
    std::vector<unsigned char> raw(32, 0);
    const uint32_t a0 = (6u << 16) | 24u, a2 = 0;
    std::memcpy(raw.data() + 16, &a0, 4);
    std::memcpy(raw.data() + 20, &a2, 4);
    std::memcpy(raw.data() + 24, "hello", 6);
    auto s = trace::data_loc_string(raw, 16);
    REQUIRE(s);
    CHECK(*s == "hello");
    CHECK_FALSE(trace::data_loc_string(raw, 20));
    // A location past the record's end is refused, not read.
    const uint32_t bad = (8u << 16) | 28u;
    std::memcpy(raw.data() + 20, &bad, 4);
    CHECK_FALSE(trace::data_loc_string(raw, 20));
    CHECK_FALSE(trace::data_loc_string(raw, 30));

    CHECK_FALSE(trace::parse_event_format("\tfield:int x;\toffset:;\n", error));
    CHECK(error.find("line 1") != std::string::npos);
}
