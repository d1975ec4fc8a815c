// USDT argument-spec parser tests. Most specs below were produced by real
// compilers through sys/sdt.h (gcc 12 x86-64 and -m32; clang 14 for aarch64,
// arm, ppc64le, s390x, riscv64), or are quoted in libbpf's/bcc's parsers.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "elf/argspec.h"

using probekit::elf::Arch;
using probekit::elf::ArgSpec;
using probekit::elf::OperandKind;
using probekit::elf::parse_arg;
using probekit::elf::parse_args;

namespace {

struct Want {
    OperandKind kind = OperandKind::Invalid;
    int size = 0;  // negative: signed
    bool is_float = false;
    std::string reg, base, index;
    int scale = 1;
    int64_t offset = 0;
    int64_t constant = 0;
    std::string symbol, segment;

    Want f() const {
        Want w = *this;
        w.is_float = true;
        return w;
    }
    Want sym(std::string s) const {
        Want w = *this;
        w.symbol = std::move(s);
        return w;
    }
    Want seg(std::string s) const {
        Want w = *this;
        w.segment = std::move(s);
        return w;
    }
};

Want R(int size, std::string reg) {
    Want w;
    w.kind = OperandKind::Register;
    w.size = size;
    w.reg = std::move(reg);
    return w;
}

Want C(int size, int64_t v) {
    Want w;
    w.kind = OperandKind::Constant;
    w.size = size;
    w.constant = v;
    return w;
}

Want M(int size, std::string base, int64_t offset, std::string index = "", int scale = 1) {
    Want w;
    w.kind = OperandKind::Memory;
    w.size = size;
    w.base = std::move(base);
    w.offset = offset;
    w.index = std::move(index);
    w.scale = scale;
    return w;
}

struct Case {
    Arch arch;
    const char* spec;
    Want want;
};

void check(const Case& c) {
    INFO(probekit::elf::arch_name(c.arch) << " spec: " << c.spec);
    const ArgSpec a = parse_arg(c.spec, c.arch);
    INFO("error: " << a.error);
    CHECK(a.kind == c.want.kind);
    CHECK(a.error.empty());
    CHECK(a.size == (c.want.size < 0 ? -c.want.size : c.want.size));
    CHECK(a.is_signed == (c.want.size < 0));
    CHECK(a.is_float == c.want.is_float);
    CHECK(a.reg == c.want.reg);
    CHECK(a.base == c.want.base);
    CHECK(a.index == c.want.index);
    CHECK(a.scale == c.want.scale);
    CHECK(a.offset == c.want.offset);
    CHECK(a.constant == c.want.constant);
    CHECK(a.symbol == c.want.symbol);
    CHECK(a.segment == c.want.segment);
    CHECK(a.text == c.spec);
}

void check_invalid(Arch arch, const std::string& spec) {
    INFO(probekit::elf::arch_name(arch) << " spec: " << spec.substr(0, 80));
    const ArgSpec a = parse_arg(spec, arch);
    INFO("kind " << static_cast<int>(a.kind) << " reg '" << a.reg << "' base '" << a.base << "'");
    CHECK(a.kind == OperandKind::Invalid);
    CHECK_FALSE(a.error.empty());
    CHECK(a.reg.empty());
    CHECK(a.base.empty());
    CHECK(a.symbol.empty());
}

}  // namespace

TEST_CASE("argspec: x86-64 AT&T operands", "[argspec]") {
    const Arch A = Arch::X86_64;
    const Case cases[] = {
        // registers, all widths
        {A, "-4@%edi", R(-4, "edi")},
        {A, "8@%rax", R(8, "rax")},
        {A, "-8@%rsi", R(-8, "rsi")},
        {A, "-2@%dx", R(-2, "dx")},
        {A, "-1@%cl", R(-1, "cl")},
        {A, "-1@%sil", R(-1, "sil")},
        {A, "1@%ah", R(1, "ah")},
        {A, "4@%r8d", R(4, "r8d")},
        {A, "-2@%r15w", R(-2, "r15w")},
        {A, "1@%r10b", R(1, "r10b")},
        {A, "8@%r15", R(8, "r15")},
        {A, "8f@%r10", R(8, "r10").f()},
        {A, "4f@%r11d", R(4, "r11d").f()},
        {A, "8f@%xmm0", R(8, "xmm0").f()},
        {A, "4f@%xmm15", R(4, "xmm15").f()},
        {A, "-8f@%xmm1", R(-8, "xmm1").f()},
        // constants
        {A, "-4@$5", C(-4, 5)},
        {A, "-4@$-9", C(-4, -9)},
        {A, "4@$0x10", C(4, 16)},
        {A, "-8@$1099511627776", C(-8, 1099511627776)},
        {A, "8@$-9223372036854775808", C(8, INT64_MIN)},
        {A, "8@$0xffffffffffffffff", C(8, -1)},
        {A, "4@$0", C(4, 0)},
        // memory
        {A, "-4@-24(%rbp)", M(-4, "rbp", -24)},
        {A, "-8@-8(%rbp)", M(-8, "rbp", -8)},
        {A, "-4@76(%rsp)", M(-4, "rsp", 76)},
        {A, "-8@(%r9)", M(-8, "r9", 0)},
        {A, "8@(%rsp)", M(8, "rsp", 0)},
        {A, "-4@16(%rdi,%rbp,4)", M(-4, "rdi", 16, "rbp", 4)},
        {A, "-4@16(%r14,%rax,4)", M(-4, "r14", 16, "rax", 4)},
        {A, "1@-96(%rbp,%rax,8)", M(1, "rbp", -96, "rax", 8)},
        {A, "1@(%rbp,%rax,8)", M(1, "rbp", 0, "rax", 8)},
        {A, "1@-96(%rbp,%rax)", M(1, "rbp", -96, "rax", 1)},
        {A, "8@(,%rcx,8)", M(8, "", 0, "rcx", 8)},
        {A, "4@0x10(%rax)", M(4, "rax", 16)},
        {A, "-8@g_counter(%rip)", M(-8, "rip", 0).sym("g_counter")},
        {A, "8f@gd(%rip)", M(8, "rip", 0).sym("gd").f()},
        {A, "4@counter+8(%rip)", M(4, "rip", 8).sym("counter")},
        {A, "4@counter-4(%rip)", M(4, "rip", -4).sym("counter")},
        {A, "4@8+counter(%rip)", M(4, "rip", 8).sym("counter")},
        {A, "4@_ZN3foo3barE(%rip)", M(4, "rip", 0).sym("_ZN3foo3barE")},
        {A, "4@.LC0(%rip)", M(4, "rip", 0).sym(".LC0")},
        {A, "-8@%fs:tls_var@tpoff", M(-8, "", 0).sym("tls_var@tpoff").seg("fs")},
        {A, "-8@%fs:0(%rbp)", M(-8, "rbp", 0).seg("fs")},
        {A, "8@%fs:-8", M(8, "", -8).seg("fs")},
        {A, "8@%fs:0x28", M(8, "", 0x28).seg("fs")},
        {A, "4@0x1234", M(4, "", 0x1234)},
        {A, "4@-12", M(4, "", -12)},
        {A, "-4@(%eax)", M(-4, "eax", 0)},  // addr32 (x32)
        {A, "-4@8(%r8d,%r9d,2)", M(-4, "r8d", 8, "r9d", 2)},
    };
    for (const auto& c : cases) check(c);

    // Not addresses, not registers, not numbers.
    for (const char* s : {"4@(%xmm0)", "4@(%ax)", "4@(%rax,%rip)", "4@(%rax,%rsp,3)", "4@(%cl)", "4@%rip:8",
                          "4@%st(1)", "4@$sym", "4@$010", "4@010(%rax)", "4@%rax%rbx", "4@sym+", "4@8+(%rax)"})
        check_invalid(A, s);
}

TEST_CASE("argspec: i386 AT&T operands", "[argspec]") {
    const Arch A = Arch::I386;
    const Case cases[] = {
        {A, "-4@%eax", R(-4, "eax")},
        {A, "-2@%esi", R(-2, "esi")},  // %k: 32-bit name for a 16-bit value (gdb PR24541)
        {A, "-1@%edi", R(-1, "edi")},
        {A, "-2@%ax", R(-2, "ax")},
        {A, "-4@8(%ebp)", M(-4, "ebp", 8)},
        {A, "-4@52(%esp)", M(-4, "esp", 52)},
        {A, "8f@(%esp)", M(8, "esp", 0).f()},
        {A, "-4@8(%edx,%ebp,4)", M(-4, "edx", 8, "ebp", 4)},
        {A, "-4@g_counter@GOTOFF(%ebx)", M(-4, "ebx", 0).sym("g_counter@GOTOFF")},
        {A, "8f@gd@GOTOFF(%ebx)", M(8, "ebx", 0).sym("gd@GOTOFF").f()},
        {A, "-4@g_counter", M(-4, "", 0).sym("g_counter")},
        {A, "8f@gd", M(8, "", 0).sym("gd").f()},
        {A, "-4@s_arr+12", M(-4, "", 12).sym("s_arr")},
        {A, "-4@%gs:tls_var@ntpoff", M(-4, "", 0).sym("tls_var@ntpoff").seg("gs")},
        {A, "-4@%gs:0(%ebp)", M(-4, "ebp", 0).seg("gs")},
        {A, "-4@$5", C(-4, 5)},
        {A, "-8@$1099511627776", C(-8, 1099511627776)},
    };
    for (const auto& c : cases) check(c);

    // 64-bit-only registers do not exist on i386.
    for (const char* s : {"8@%rax", "4@%r8d", "1@%sil", "4@(%rax)", "4@%xmm8", "8@x(%rip)"})
        check_invalid(Arch::I386, s);
}

TEST_CASE("argspec: aarch64 operands", "[argspec]") {
    const Arch A = Arch::AArch64;
    const Case cases[] = {
        {A, "-4@x0", R(-4, "x0")},
        {A, "-8@x30", R(-8, "x30")},
        {A, "4@w1", R(4, "w1")},
        {A, "8@sp", R(8, "sp")},
        {A, "8@xzr", R(8, "xzr")},
        {A, "8f@v0", R(8, "v0").f()},
        {A, "8f@d8", R(8, "d8").f()},
        {A, "4f@s31", R(4, "s31").f()},
        {A, "-4@5", C(-4, 5)},
        {A, "-4@-9", C(-4, -9)},
        {A, "-4@#5", C(-4, 5)},
        {A, "-4@#-9", C(-4, -9)},
        {A, "-8@1099511627776", C(-8, 1099511627776)},
        {A, "8@0x10", C(8, 16)},
        {A, "-4@[sp]", M(-4, "sp", 0)},
        {A, "-4@[x12]", M(-4, "x12", 0)},
        {A, "8f@[x13]", M(8, "x13", 0).f()},
        {A, "-4@[sp, 96]", M(-4, "sp", 96)},
        {A, "8@[sp, 16]", M(8, "sp", 16)},
        {A, "-8@[x29, -8]", M(-8, "x29", -8)},
        {A, "8@[sp, #16]", M(8, "sp", 16)},
        {A, "8@[sp,16]", M(8, "sp", 16)},
        {A, "8@[x0, x1, lsl 3]", M(8, "x0", 0, "x1", 8)},
        {A, "8@[x0, x1]", M(8, "x0", 0, "x1", 1)},
        {A, "4@[x21, #:lo12:.LANCHOR2]", M(4, "x21", 0).sym(":lo12:.LANCHOR2")},  // gcc, bcc issue #4185
        {A, "2@[x22, 20]", M(2, "x22", 20)},                                     // gcc, bcc issue #3649
        {A, "4@[x1, #:lo12:counter]", M(4, "x1", 0).sym(":lo12:counter")},
        {A, "4@[x1, :lo12:counter+8]", M(4, "x1", 8).sym(":lo12:counter")},
    };
    for (const auto& c : cases) check(c);

    for (const char* s : {"4@x31", "4@w32", "4@r0", "4@%x0", "4@[x0", "4@[x0, 8]!", "4@[x0, x1, sxtw]", "4@[q]",
                          "4@[sp, ]", "4@#", "4@#foo", "4@x0 extra", "4@[s5, #16]", "4@[w0]", "4@[sp, q16]",
                          "4@[x0, #:4lo12:c]", "4@[x0, #::c]", "4@#05", "4@[sp, 016]"})
        check_invalid(A, s);
}

TEST_CASE("argspec: arm operands", "[argspec]") {
    const Arch A = Arch::Arm;
    const Case cases[] = {
        {A, "-4@r0", R(-4, "r0")},
        {A, "-4@r8", R(-4, "r8")},
        {A, "-4@r12", R(-4, "r12")},
        {A, "-4@sp", R(-4, "sp")},
        {A, "-4@fp", R(-4, "fp")},
        {A, "-4@lr", R(-4, "lr")},
        {A, "-4@ip", R(-4, "ip")},
        {A, "8f@d0", R(8, "d0").f()},
        {A, "-4@#5", C(-4, 5)},
        {A, "-4@#-9", C(-4, -9)},
        {A, "-8@#1099511627776", C(-8, 1099511627776)},
        {A, "-4@5", C(-4, 5)},
        {A, "-4@[r2]", M(-4, "r2", 0)},
        {A, "-4@[lr]", M(-4, "lr", 0)},
        {A, "-4@[sp]", M(-4, "sp", 0)},
        {A, "-4@[fp, #-8]", M(-4, "fp", -8)},
        {A, "-4@[fp, #96]", M(-4, "fp", 96)},
        {A, "4@[sp, #4]", M(4, "sp", 4)},
        {A, "4@[sp, 4]", M(4, "sp", 4)},
        {A, "4@[r3, r2]", M(4, "r3", 0, "r2", 1)},
        {A, "4@[r3, r2, lsl #2]", M(4, "r3", 0, "r2", 4)},
        {A, "8f@[r2]", M(8, "r2", 0).f()},
    };
    for (const auto& c : cases) check(c);

    for (const char* s : {"4@r16", "4@x0", "4@[r3, -r2]", "4@[fp, #-8", "4@#", "4@[r0, #:lo12:x]", "4@[fp, #-8]!", "4@[s0, 16]", "4@[sp, q5]",
                          "4@-05"})
        check_invalid(A, s);
}

TEST_CASE("argspec: ppc64 operands", "[argspec]") {
    const Arch A = Arch::PPC64;
    const Case cases[] = {
        // gcc/clang without -mregnames print registers as bare numbers
        {A, "-4@24", R(-4, "r24")},
        {A, "-8@3", R(-8, "r3")},
        {A, "-8@0", R(-8, "r0")},
        {A, "8@31", R(8, "r31")},
        {A, "-4@%r3", R(-4, "r3")},
        {A, "-4@r3", R(-4, "r3")},
        {A, "8f@%f1", R(8, "f1").f()},
        // constants: the %I modifier prints an 'i' before an immediate
        {A, "-4@i5", C(-4, 5)},
        {A, "-4@i-9", C(-4, -9)},
        {A, "-8@i1099511627776", C(-8, 1099511627776)},
        {A, "-4@i0", C(-4, 0)},
        // memory
        {A, "-4@0(5)", M(-4, "r5", 0)},
        {A, "-8@0(30)", M(-8, "r30", 0)},
        {A, "8f@0(5)", M(8, "r5", 0).f()},
        {A, "-4@8(31)", M(-4, "r31", 8)},
        {A, "-4@-8(%r31)", M(-4, "r31", -8)},
        {A, "-4@112(%r1)", M(-4, "r1", 112)},
        {A, "-8@.LC0@toc@l(9)", M(-8, "r9", 0).sym(".LC0@toc@l")},
        {A, "4@9,10", M(4, "r9", 0, "r10", 1)},
        {A, "4@%r9,%r10", M(4, "r9", 0, "r10", 1)},
        // r0 as a base reads as 0, not as the register
        {A, "4@16(0)", M(4, "", 16)},
        {A, "4@0,10", M(4, "", 0, "r10", 1)},
        {A, "4@10,0", M(4, "r10", 0, "r0", 1)},
    };
    for (const auto& c : cases) check(c);

    for (const char* s : {"4@32", "4@-5", "4@$5", "4@#5", "4@8(32)", "4@8(%r31", "4@i", "4@ix", "4@%3", "4@9,", "4@8(%f1)",
                          "4@%f1,%r2", "4@03", "4@i05", "4@08(31)"})
        check_invalid(A, s);
}

TEST_CASE("argspec: s390x operands", "[argspec]") {
    const Arch A = Arch::S390X;
    const Case cases[] = {
        {A, "-4@%r9", R(-4, "r9")},
        {A, "-8@%r0", R(-8, "r0")},
        {A, "-8@%r15", R(-8, "r15")},
        {A, "8f@%f0", R(8, "f0").f()},
        {A, "-4@5", C(-4, 5)},
        {A, "-4@-9", C(-4, -9)},
        {A, "-8@1099511627776", C(-8, 1099511627776)},
        {A, "-4@212(%r15)", M(-4, "r15", 212)},
        {A, "-2@-28(%r15)", M(-2, "r15", -28)},
        {A, "8f@224(%r15)", M(8, "r15", 224).f()},
        {A, "-4@160(%r1,%r15)", M(-4, "r15", 160, "r1", 1)},
        {A, "-4@(%r2)", M(-4, "r2", 0)},
        {A, "-4@0(,%r2)", M(-4, "r2", 0)},
        {A, "-4@8(%r0)", M(-4, "", 8)},  // r0 in an address reads as 0
        {A, "-4@8(%r0,%r15)", M(-4, "r15", 8)},
    };
    for (const auto& c : cases) check(c);

    for (const char* s : {"4@%r16", "4@r2", "4@160(r15)", "4@160(%r15", "4@$5", "4@i5", "4@(%r1,)", "4@(%f2)", "4@8(%r1,%f2)",
                          "4@()", "4@012"})
        check_invalid(A, s);
}

TEST_CASE("argspec: riscv64 operands", "[argspec]") {
    const Arch A = Arch::RISCV64;
    const Case cases[] = {
        {A, "-4@a0", R(-4, "a0")},
        {A, "-8@a1", R(-8, "a1")},
        {A, "-8@s1", R(-8, "s1")},
        {A, "8@s11", R(8, "s11")},
        {A, "8@sp", R(8, "sp")},
        {A, "8@t6", R(8, "t6")},
        {A, "8@x10", R(8, "x10")},
        {A, "8@zero", R(8, "zero")},
        {A, "8f@fa0", R(8, "fa0").f()},
        {A, "-4@5", C(-4, 5)},
        {A, "-4@-9", C(-4, -9)},
        {A, "-8@1099511627776", C(-8, 1099511627776)},
        {A, "-8@8(sp)", M(-8, "sp", 8)},
        {A, "-4@-16(s0)", M(-4, "s0", -16)},
        {A, "-8@-88(s0)", M(-8, "s0", -88)},
        {A, "-8@(sp)", M(-8, "sp", 0)},
        {A, "4@%lo(counter)(a5)", M(4, "a5", 0).sym("%lo(counter)")},
        {A, "4@%lo(counter+8)(a5)", M(4, "a5", 0).sym("%lo(counter+8)")},
    };
    for (const auto& c : cases) check(c);

    for (const char* s : {"4@a8", "4@s12", "4@t7", "4@%a0", "4@8(a0", "4@8(q9)", "4@$5", "4@#5", "4@%lo(x)", "4@8(fa0)", "4@%4o(x)(a5)",
                          "4@%lo(5)(a5)", "4@%lo(x(a5)", "4@08(sp)"})
        check_invalid(A, s);
}

TEST_CASE("argspec: invalid specs are reported, never fatal", "[argspec]") {
    const Arch arches[] = {Arch::X86_64, Arch::I386, Arch::AArch64, Arch::Arm,
                           Arch::PPC64,  Arch::S390X, Arch::RISCV64, Arch::Unknown};
    const std::string long_reg = "8@%" + std::string(100000, 'a');
    const std::string long_num = "8@$" + std::string(5000, '9');
    const std::string long_parens = "8@" + std::string(10000, '(');
    const std::string long_garbage(200000, '@');
    const std::vector<std::string> bad = {
        "", "@", "4@", "3@%eax", "-4@%", "8@(%rbp", "garbage", "16@%rax", "0@%rax", "04@%eax", "12345@%eax",
        "-@%eax", "4%eax", "4f", "f@%eax", "4@@%eax", "4@ ", "4@%eax)", "4@(%eax))", "4@()", "4@$", "4@$x",
        "4@$0x", "4@$99999999999999999999", "4@%fs:", "4@%zz", "4@%eax,%ebx", "4@8(%rbp,%rax,3)", "4@8(%rbp,,4)",
        "4@[", "4@]", "4@[]", "4@[,]", "4@#:", "4@%r", "4@(", "4@)", "4@,", "\xff\xfe@\x01", long_reg,
        long_num, long_parens, long_garbage, std::string("4@%e\0ax", 7)};
    for (Arch arch : arches)
        for (const auto& s : bad) check_invalid(arch, s);

    SECTION("errors carry a message and keep the size when it was readable") {
        const ArgSpec a = parse_arg("3@%eax", Arch::X86_64);
        CHECK(a.kind == OperandKind::Invalid);
        CHECK(a.error.find("size") != std::string::npos);
        const ArgSpec b = parse_arg("-4@%bogus", Arch::X86_64);
        CHECK(b.kind == OperandKind::Invalid);
        CHECK(b.size == 4);
        CHECK(b.is_signed);
        CHECK(b.error.find("bogus") != std::string::npos);
        CHECK(b.text == "-4@%bogus");
    }
    SECTION("unknown architecture") {
        const ArgSpec a = parse_arg("-4@%edi", Arch::Unknown);
        CHECK(a.kind == OperandKind::Invalid);
        CHECK_FALSE(a.error.empty());
    }
}

TEST_CASE("argspec: parse_args splits on blanks outside brackets", "[argspec]") {
    CHECK(parse_args("", Arch::X86_64).empty());
    CHECK(parse_args("   ", Arch::X86_64).empty());

    auto v = parse_args("-4@%esi -4@-24(%rbp) -4@%ecx 2@%ax 8@%rdx", Arch::X86_64);
    REQUIRE(v.size() == 5);
    CHECK(v[0].reg == "esi");
    CHECK(v[1].base == "rbp");
    CHECK(v[1].offset == -24);
    CHECK(v[3].size == 2);
    CHECK(v[4].text == "8@%rdx");

    v = parse_args("  -4@%edi    8@$5  ", Arch::X86_64);
    REQUIRE(v.size() == 2);
    CHECK(v[0].text == "-4@%edi");
    CHECK(v[1].kind == OperandKind::Constant);
    CHECK(v[1].constant == 5);

    v = parse_args("-4@%edi ", Arch::X86_64);
    REQUIRE(v.size() == 1);
    CHECK(v[0].kind == OperandKind::Register);

    // Arm memory operands contain blanks.
    v = parse_args("-4@[sp, 96] 8@x0 -8@[x29, -8] 4@5", Arch::AArch64);
    REQUIRE(v.size() == 4);
    CHECK(v[0].text == "-4@[sp, 96]");
    CHECK(v[0].offset == 96);
    CHECK(v[1].reg == "x0");
    CHECK(v[2].base == "x29");
    CHECK(v[2].offset == -8);
    CHECK(v[3].constant == 5);

    v = parse_args("-4@[fp, #-8] -4@#5 -4@r0", Arch::Arm);
    REQUIRE(v.size() == 3);
    CHECK(v[0].offset == -8);
    CHECK(v[1].constant == 5);
    CHECK(v[2].reg == "r0");

    // An unbalanced bracket does not swallow the following arguments.
    v = parse_args("8@(%rbp 4@%eax", Arch::X86_64);
    REQUIRE(v.size() == 2);
    CHECK(v[0].kind == OperandKind::Invalid);
    CHECK(v[1].reg == "eax");
    v = parse_args("-4@[sp, 16 8@x0", Arch::AArch64);
    REQUIRE(v.size() == 2);
    CHECK(v[0].kind == OperandKind::Invalid);
    CHECK(v[1].reg == "x0");

    // One bad argument does not affect the others (or their positions).
    v = parse_args("-4@%edi 3@%eax garbage 8@%rax", Arch::X86_64);
    REQUIRE(v.size() == 4);
    CHECK(v[0].kind == OperandKind::Register);
    CHECK(v[1].kind == OperandKind::Invalid);
    CHECK(v[2].kind == OperandKind::Invalid);
    CHECK(v[3].reg == "rax");

    // Tabs and other blanks separate too.
    v = parse_args("-4@%edi\t8@%rax\n", Arch::X86_64);
    REQUIRE(v.size() == 2);

    // A real 12-argument note.
    v = parse_args("-4@-1204(%rbp) -4@%edi -8@-1216(%rbp) -8@%r8 -4@$5 -8@%r9 8@%rdx 8@%r10 -4@$-9 -2@%cx -2@%ax -1@%sil",
                   Arch::X86_64);
    REQUIRE(v.size() == 12);
    for (const auto& a : v) CHECK(a.kind != OperandKind::Invalid);
    CHECK(v[8].constant == -9);
    CHECK(v[11].reg == "sil");
}

TEST_CASE("argspec: next_arg splits as parse_args does", "[argspec]") {
    using probekit::elf::next_arg;
    auto pieces = [](std::string_view args) {
        std::vector<std::string> out;
        size_t pos = 0;
        std::string_view piece;
        while (next_arg(args, pos, piece)) out.emplace_back(piece);
        CHECK(pos <= args.size());
        return out;
    };
    using V = std::vector<std::string>;
    CHECK(pieces("").empty());
    CHECK(pieces(" \t\n").empty());
    CHECK(pieces("-4@%edi") == V{"-4@%edi"});
    CHECK(pieces("  -4@%edi    8@$5  ") == V{"-4@%edi", "8@$5"});
    CHECK(pieces("-4@%esi -4@-24(%rbp) 8@%rdx") == V{"-4@%esi", "-4@-24(%rbp)", "8@%rdx"});
    CHECK(pieces("-4@[sp, 96] 8@x0 -8@[x29, -8]") == V{"-4@[sp, 96]", "8@x0", "-8@[x29, -8]"});
    CHECK(pieces("8@(%rbp 4@%eax") == V{"8@(%rbp", "4@%eax"});
    CHECK(pieces("-4@[sp, 16 8@x0") == V{"-4@[sp, 16", "8@x0"});
    CHECK(pieces("-4@%edi\t8@%rax\n") == V{"-4@%edi", "8@%rax"});
    CHECK(pieces("8@%rax)x 4@\x01%eax") == V{"8@%rax)x", "4@\x01%eax"});
    CHECK(pieces("8@%lo(sym)(a5) -4@8(%r15)") == V{"8@%lo(sym)(a5)", "-4@8(%r15)"});

    // Every piece parses to what parse_args gives for that position.
    for (std::string_view args : {"-4@-1204(%rbp) -4@%edi -8@%r8 -4@$5", "-4@[fp, #-8] -4@#5 -4@r0", "8@(%rbp 4@%eax",
                                  "-4@%edi 3@%eax garbage 8@%rax", "   ", "-4@[sp, 16 8@x0"}) {
        for (Arch arch : {Arch::X86_64, Arch::AArch64, Arch::Arm}) {
            auto all = parse_args(args, arch);
            auto ps = pieces(args);
            REQUIRE(all.size() == ps.size());
            for (size_t i = 0; i < ps.size(); ++i) {
                auto one = parse_arg(ps[i], arch);
                CHECK(one.text == all[i].text);
                CHECK(one.kind == all[i].kind);
                CHECK(one.error == all[i].error);
            }
        }
    }
}

TEST_CASE("argspec: arch mapping", "[argspec]") {
    using probekit::elf::arch_from_elf;
    using probekit::elf::arch_name;
    CHECK(arch_from_elf(62, true) == Arch::X86_64);
    CHECK(arch_from_elf(3, false) == Arch::I386);
    CHECK(arch_from_elf(183, true) == Arch::AArch64);
    CHECK(arch_from_elf(40, false) == Arch::Arm);
    CHECK(arch_from_elf(21, true) == Arch::PPC64);
    CHECK(arch_from_elf(22, true) == Arch::S390X);
    CHECK(arch_from_elf(243, true) == Arch::RISCV64);
    CHECK(arch_from_elf(243, false) == Arch::Unknown);
    CHECK(arch_from_elf(8, false) == Arch::Unknown);  // MIPS
    CHECK(std::string(arch_name(Arch::X86_64)) == "x86_64");
    CHECK(std::string(arch_name(Arch::Unknown)) == "unknown");
}

TEST_CASE("argspec: parsing 200k sites stays fast", "[argspec]") {
    // Not a benchmark; guards against an accidental quadratic path or regex.
    const std::string note = "-4@%edi -8@-24(%rbp) 8@$5 -4@16(%rdi,%rbp,4) -8@%fs:tls_var@tpoff -8@g_counter(%rip)";
    size_t n = 0;
    for (int i = 0; i < 200000; ++i) n += parse_args(note, Arch::X86_64).size();
    CHECK(n == 6u * 200000u);
}
