// USDT argument-spec parser: `[-]N[f]@operand`, operand in each
// architecture's assembler syntax as GCC/Clang print it through sys/sdt.h.
//
// A hand-written single-pass scanner over a string_view: no regex,
// no exceptions. The result's strings are views into the spec (or static
// text), so parsing allocates nothing unless the spec is invalid (the error).
//
// Conventions for the result (beyond argspec.h):
//  - `text` is the whole argument as written ("-4@%edi"), trimmed.
//  - Registers are stored as written without '%', except that ppc64 bare
//    register numbers ("3", "31" — GCC without -mregnames) are normalised to
//    "r3"/"r31" so that `3` and `%r3` come out the same.
//  - x86 `sym(%rip)` / `sym+8(%rip)`: base "rip", symbol "sym", offset 8; the
//    address is the symbol's plus the offset (the assembler resolved the
//    rip-relative form).
//  - Symbols carrying a relocation operator keep it: `var@tpoff`,
//    `.LC0@toc@l`, `:lo12:var` (aarch64), `%lo(var)` (riscv). Such an address
//    is base + relocated value, not base + symbol address.
//  - s390x `D(X,B)`: the first register inside the parentheses is the index,
//    the second the base (the ISA's order); `D(B)` is base only.
//  - ppc64 indexed `rA,rB`: base rA, index rB, scale 1 (EA = rA + rB).
//  - riscv `%lo(sym+8)(a5)`: the symbol is the whole relocation, "%lo(sym+8)",
//    offset 0 (%lo of sym+8 is not %lo of sym plus 8 across a 2 KiB boundary).
//  - ppc64/s390x: r0 in an address position reads as 0 and is left out of
//    base/index (`16(0)` is the absolute address 16).
//  - Base and index must be general-purpose registers of the right width.
//  - Numbers: decimal or 0x-hex, optionally signed. A leading zero ("010")
//    is refused: GAS and bcc read it as octal, libbpf as decimal.
//  - Sizes other than 1, 2, 4, 8 (e.g. 16 for long double / __int128) are
//    Invalid, with `size` still set.
#include "elf/argspec.h"

#include <cstddef>
#include <initializer_list>
#include <limits>

namespace probekit::elf {

namespace {

// ---------------------------------------------------------------------------
// Character classes (locale-free, unlike <cctype>).

constexpr bool is_digit(char c) { return c >= '0' && c <= '9'; }
constexpr bool is_lower(char c) { return c >= 'a' && c <= 'z'; }
constexpr bool is_alpha(char c) { return is_lower(c) || (c >= 'A' && c <= 'Z'); }
constexpr bool is_alnum(char c) { return is_alpha(c) || is_digit(c); }
constexpr bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }
constexpr bool is_hex(char c) {
    return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
constexpr int hex_value(char c) {
    return is_digit(c) ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : c - 'A' + 10;
}
// Symbol characters as GAS accepts them unquoted.
constexpr bool is_sym_start(char c) { return is_alpha(c) || c == '_' || c == '.'; }
constexpr bool is_sym_char(char c) { return is_alnum(c) || c == '_' || c == '.' || c == '$'; }

// ---------------------------------------------------------------------------
// Cursor over the operand.

struct Cursor {
    explicit Cursor(std::string_view text) : s(text) {}

    std::string_view s;
    size_t pos = 0;

    bool done() const { return pos >= s.size(); }
    char peek(size_t ahead = 0) const { return pos + ahead < s.size() ? s[pos + ahead] : '\0'; }
    bool eat(char c) {
        if (peek() != c || done()) return false;
        ++pos;
        return true;
    }
    bool eat(std::string_view lit) {
        if (s.substr(pos, lit.size()) != lit) return false;
        pos += lit.size();
        return true;
    }
    void skip_space() {
        while (!done() && is_space(s[pos])) ++pos;
    }
    std::string_view rest() const { return s.substr(pos < s.size() ? pos : s.size()); }
    // Letters and digits: a register name.
    std::string_view take_alnum() {
        size_t b = pos;
        while (!done() && is_alnum(s[pos])) ++pos;
        return s.substr(b, pos - b);
    }
};

enum class NumResult { Ok, None, Overflow, Ambiguous };

// [+-] (decimal | 0x hex). Magnitudes up to 2^64-1 are accepted and wrap to
// int64 (an unsigned 8-byte constant may be printed as 0xffff...); a negative
// number must fit in int64. A number with a leading zero ("010") is refused
// (compilers never print one; consumers disagree on its base). Unless Ok, the
// cursor is left where it was.
NumResult parse_number(Cursor& c, int64_t& out) {
    const size_t start = c.pos;
    bool neg = false;
    if (c.peek() == '-' || c.peek() == '+') {
        neg = c.peek() == '-';
        ++c.pos;
    }
    uint64_t v = 0;
    bool overflow = false;
    if (c.peek() == '0' && (c.peek(1) == 'x' || c.peek(1) == 'X') && is_hex(c.peek(2))) {
        c.pos += 2;
        while (is_hex(c.peek())) {
            if (v > (std::numeric_limits<uint64_t>::max() >> 4)) overflow = true;
            v = (v << 4) | static_cast<uint64_t>(hex_value(c.peek()));
            ++c.pos;
        }
    } else if (is_digit(c.peek())) {
        if (c.peek() == '0' && is_digit(c.peek(1))) {
            // GAS and bcc (strtol base 0) read this as octal, libbpf
            // (sscanf %ld) as decimal: refuse to guess.
            c.pos = start;
            return NumResult::Ambiguous;
        }
        while (is_digit(c.peek())) {
            const auto d = static_cast<uint64_t>(c.peek() - '0');
            if (v > (std::numeric_limits<uint64_t>::max() - d) / 10) overflow = true;
            v = v * 10 + d;
            ++c.pos;
        }
    } else {
        c.pos = start;
        return NumResult::None;
    }
    if (overflow || (neg && v > (uint64_t{1} << 63))) {
        c.pos = start;
        return NumResult::Overflow;
    }
    out = neg ? static_cast<int64_t>(~v + 1) : static_cast<int64_t>(v);
    return NumResult::Ok;
}

// A symbol with optional `@reloc` suffixes (`var@tpoff`, `.LC0@toc@l`).
std::string_view parse_symbol(Cursor& c) {
    const size_t b = c.pos;
    if (!is_sym_start(c.peek())) return {};
    while (is_sym_char(c.peek())) ++c.pos;
    while (c.peek() == '@' && is_alpha(c.peek(1))) {
        ++c.pos;
        while (is_alnum(c.peek())) ++c.pos;
    }
    return c.s.substr(b, c.pos - b);
}

// A 1- or 2-digit decimal in [lo, hi], without leading zeros.
bool small_number(std::string_view d, int lo, int hi) {
    if (d.empty() || d.size() > 2 || (d.size() > 1 && d[0] == '0')) return false;
    int n = 0;
    for (char ch : d) {
        if (!is_digit(ch)) return false;
        n = n * 10 + (ch - '0');
    }
    return n >= lo && n <= hi;
}

// a == b, inlined: std::string_view's operator== calls memcmp, which
// dominated register matching (a dozen candidates per operand).
constexpr bool same(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (a[i] != b[i]) return false;
    return true;
}

// `<prefix><n>` with n in [lo, hi].
bool numbered(std::string_view name, std::string_view prefix, int lo, int hi) {
    if (name.size() <= prefix.size() || !same(name.substr(0, prefix.size()), prefix)) return false;
    return small_number(name.substr(prefix.size()), lo, hi);
}

bool one_of(std::string_view name, std::initializer_list<std::string_view> names) {
    for (auto n : names)
        if (same(n, name)) return true;
    return false;
}

// ---------------------------------------------------------------------------
// Register sets.

// rax..rsp: the 64-bit general-purpose registers with names.
bool x86_named_gpr64(std::string_view r) { return one_of(r, {"rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp"}); }

// r8..r15, with one of the size suffixes in `suffixes` allowed.
bool x86_numbered_gpr64(std::string_view r, std::string_view suffixes) {
    if (r.size() < 2 || r[0] != 'r') return false;
    std::string_view n = r.substr(1);
    if (suffixes.find(n.back()) != std::string_view::npos) n.remove_suffix(1);
    return small_number(n, 8, 15);
}

// The 64-bit names are tried first: nearly every x86-64 operand uses one.
bool x86_register(std::string_view r, bool is64) {
    if (is64 && (x86_named_gpr64(r) || x86_numbered_gpr64(r, "dwb") || one_of(r, {"rip", "sil", "dil", "bpl", "spl"})))
        return true;
    if (one_of(r, {"eax", "ebx", "ecx", "edx", "esi", "edi", "ebp", "esp", "eip", "ax", "bx", "cx", "dx", "si",
                   "di", "bp", "sp", "al", "ah", "bl", "bh", "cl", "ch", "dl", "dh"}))
        return true;
    const int vmax = is64 ? 31 : 7;
    return numbered(r, "xmm", 0, vmax) || numbered(r, "ymm", 0, vmax) || numbered(r, "zmm", 0, vmax) ||
           numbered(r, "mm", 0, 7);
}

// Registers that can form an address (base or index).
bool x86_address_register(std::string_view r, bool is64) {
    if (is64 && (x86_named_gpr64(r) || x86_numbered_gpr64(r, "d"))) return true;
    return one_of(r, {"eax", "ebx", "ecx", "edx", "esi", "edi", "ebp", "esp"});
}

bool x86_segment(std::string_view r) { return one_of(r, {"cs", "ds", "es", "fs", "gs", "ss"}); }

bool aarch64_register(std::string_view r) {
    if (one_of(r, {"sp", "wsp", "xzr", "wzr", "fp", "lr"})) return true;
    if (numbered(r, "x", 0, 30) || numbered(r, "w", 0, 30)) return true;
    for (auto p : {"v", "q", "d", "s", "h", "b"})
        if (numbered(r, p, 0, 31)) return true;
    return false;
}

bool aarch64_address_register(std::string_view r) {
    return one_of(r, {"sp", "fp", "lr"}) || numbered(r, "x", 0, 30);
}

bool arm_address_register(std::string_view r) {
    return one_of(r, {"sp", "lr", "pc", "fp", "ip", "sl", "sb"}) || numbered(r, "r", 0, 15);
}

bool arm_register(std::string_view r) {
    if (one_of(r, {"sp", "lr", "pc", "fp", "ip", "sl", "sb"})) return true;
    return numbered(r, "r", 0, 15) || numbered(r, "s", 0, 31) || numbered(r, "d", 0, 31) || numbered(r, "q", 0, 15);
}

bool riscv_register(std::string_view r) {
    if (one_of(r, {"zero", "ra", "sp", "gp", "tp", "fp"})) return true;
    return numbered(r, "x", 0, 31) || numbered(r, "f", 0, 31) || numbered(r, "t", 0, 6) || numbered(r, "s", 0, 11) ||
           numbered(r, "a", 0, 7) || numbered(r, "ft", 0, 11) || numbered(r, "fs", 0, 11) ||
           numbered(r, "fa", 0, 7);
}

bool riscv_address_register(std::string_view r) {
    if (one_of(r, {"zero", "ra", "sp", "gp", "tp", "fp"})) return true;
    return numbered(r, "x", 0, 31) || numbered(r, "t", 0, 6) || numbered(r, "s", 0, 11) || numbered(r, "a", 0, 7);
}

bool s390_register(std::string_view r) {
    return numbered(r, "r", 0, 15) || numbered(r, "f", 0, 15) || numbered(r, "v", 0, 31) || numbered(r, "a", 0, 15);
}

bool ppc_register(std::string_view r) {
    return numbered(r, "r", 0, 31) || numbered(r, "f", 0, 31) || numbered(r, "v", 0, 31) ||
           numbered(r, "vs", 0, 63);
}

// ---------------------------------------------------------------------------
// Result helpers.

// Marks the spec Invalid. The message is built before the operand fields
// are cleared: `what` may point into one of them.
bool fail_with(ArgSpec& a, std::string_view why, std::string_view what, bool quote) {
    a.error.assign(why.data(), why.size());
    if (quote) {
        a.error += " '";
        a.error.append(what.substr(0, 64));
        if (what.size() > 64) a.error += "...";
        a.error += '\'';
    }
    a.kind = OperandKind::Invalid;
    a.reg = a.base = a.index = a.symbol = a.segment = {};
    a.scale = 1;
    a.offset = 0;
    a.constant = 0;
    return false;
}

bool fail(ArgSpec& a, std::string_view why) { return fail_with(a, why, {}, false); }
bool fail(ArgSpec& a, std::string_view why, std::string_view what) { return fail_with(a, why, what, true); }

bool number_error(ArgSpec& a, NumResult r, const Cursor& c, std::string_view what) {
    if (r == NumResult::Overflow) return fail(a, "number out of range in", c.rest());
    if (r == NumResult::Ambiguous) return fail(a, "number with a leading zero (octal or decimal?) in", c.rest());
    return fail(a, what, c.rest());
}

bool finish(ArgSpec& a, const Cursor& c) {
    if (!c.done()) return fail(a, "unexpected trailing characters", c.rest());
    return true;
}

bool set_register(ArgSpec& a, std::string_view r) {
    a.kind = OperandKind::Register;
    a.reg = r;
    return true;
}

bool set_constant(ArgSpec& a, int64_t v) {
    a.kind = OperandKind::Constant;
    a.constant = v;
    return true;
}

// An immediate: a number that ends the operand. Symbols (`$sym`) are not
// values a tracer can read.
bool parse_immediate(ArgSpec& a, Cursor& c, std::string_view expected) {
    int64_t v = 0;
    auto r = parse_number(c, v);
    if (r != NumResult::Ok) {
        if (r == NumResult::None && is_sym_start(c.peek())) return fail(a, "symbolic immediate not supported:", c.rest());
        return number_error(a, r, c, expected);
    }
    set_constant(a, v);
    return finish(a, c);
}

// A register name that `known` accepts, into `out`.
bool take_register(ArgSpec& a, Cursor& c, std::string_view& out, bool (*known)(std::string_view)) {
    auto r = c.take_alnum();
    if (r.empty()) return fail(a, "expected a register in", c.rest());
    if (!known(r)) return fail(a, "unknown register", r);
    out = r;
    return true;
}

bool valid_scale(int64_t s) { return s == 1 || s == 2 || s == 4 || s == 8; }

// ---------------------------------------------------------------------------
// x86-64 / i386, AT&T syntax.

// A base (rip/eip allowed) or index register inside parentheses.
bool x86_reg(ArgSpec& a, Cursor& c, bool is64, std::string_view& out, bool is_base) {
    if (!c.eat('%')) return fail(a, "expected '%' before register in", c.rest());
    auto r = c.take_alnum();
    if (r.empty()) return fail(a, "missing register name after '%' in", c.s);
    if (!x86_register(r, is64)) return fail(a, "unknown register", r);
    const bool pc = r == "eip" || (is64 && r == "rip");
    if (!x86_address_register(r, is64) && !(is_base && pc))
        return fail(a, is_base ? "register cannot be a base:" : "register cannot be an index:", r);
    out = r;
    return true;
}

bool parse_x86(ArgSpec& a, Cursor& c, bool is64) {
    if (c.eat('$')) return parse_immediate(a, c, "expected a number after '$' in");
    if (c.peek() == '%') {
        ++c.pos;
        auto r = c.take_alnum();
        if (r.empty()) return fail(a, "missing register name after '%' in", c.s);
        if (c.peek() == ':') {
            if (!x86_segment(r)) return fail(a, "unknown segment register", r);
            ++c.pos;
            a.segment = r;
            if (c.done()) return fail(a, "missing address after segment override in", c.s);
        } else {
            if (!x86_register(r, is64)) return fail(a, "unknown register", r);
            set_register(a, r);
            return finish(a, c);
        }
    }

    // Memory: [disp] [ '(' [%base] [',' %index [',' scale]] ')' ]
    // disp: number | number '+' sym | sym [('+'|'-') number]
    a.kind = OperandKind::Memory;
    bool have_disp = false;
    int64_t off = 0;
    auto nr = parse_number(c, off);
    if (nr == NumResult::Overflow || nr == NumResult::Ambiguous) return number_error(a, nr, c, "");
    if (nr == NumResult::Ok) {
        have_disp = true;
        if (c.peek() == '+' && is_sym_start(c.peek(1))) {
            ++c.pos;
            a.symbol = parse_symbol(c);
        }
    } else if (is_sym_start(c.peek())) {
        have_disp = true;
        a.symbol = parse_symbol(c);
        if (c.peek() == '+' || c.peek() == '-') {
            nr = parse_number(c, off);
            if (nr != NumResult::Ok) return number_error(a, nr, c, "expected a number after symbol in");
        }
    }
    a.offset = off;
    if (c.eat('(')) {
        if (c.peek() == '%') {
            if (!x86_reg(a, c, is64, a.base, true)) return false;
        }
        if (c.eat(',')) {
            if (!x86_reg(a, c, is64, a.index, false)) return false;
            if (c.eat(',')) {
                int64_t s = 0;
                nr = parse_number(c, s);
                if (nr != NumResult::Ok) return number_error(a, nr, c, "expected a scale in");
                if (!valid_scale(s)) return fail(a, "scale must be 1, 2, 4 or 8 in", c.s);
                a.scale = static_cast<int>(s);
            }
        }
        if (!c.eat(')')) return fail(a, c.done() ? "missing ')' in" : "unexpected characters in", c.done() ? c.s : c.rest());
        if (a.base.empty() && a.index.empty()) return fail(a, "empty parentheses in", c.s);
    } else if (!have_disp) {
        return fail(a, "unrecognised operand", c.rest());
    }
    return finish(a, c);
}

// ---------------------------------------------------------------------------
// AArch64 and 32-bit Arm: `reg`, `#imm` / `imm`, `[reg]`, `[reg, #?off]`,
// `[reg, reg]`, `[reg, reg, lsl #?n]`, aarch64 `[reg, #:lo12:sym]`.

// A base or index register inside brackets.
bool arm_parse_register(ArgSpec& a, Cursor& c, bool aarch64, std::string_view& out) {
    auto r = c.take_alnum();
    if (r.empty()) return fail(a, "expected a register in", c.rest());
    if (aarch64 ? !aarch64_register(r) : !arm_register(r)) return fail(a, "unknown register", r);
    if (aarch64 ? !aarch64_address_register(r) : !arm_address_register(r))
        return fail(a, "register cannot form an address:", r);
    out = r;
    return true;
}

bool parse_arm_like(ArgSpec& a, Cursor& c, bool aarch64) {
    if (c.eat('[')) {
        a.kind = OperandKind::Memory;
        c.skip_space();
        if (!arm_parse_register(a, c, aarch64, a.base)) return false;
        c.skip_space();
        if (c.eat(',')) {
            c.skip_space();
            const bool hash = c.eat('#');
            if (aarch64 && c.peek() == ':') {
                // #:lo12:sym[+off]
                const size_t b = c.pos;
                ++c.pos;
                if (!is_lower(c.peek())) return fail(a, "bad relocation operator in", c.s);
                while (is_lower(c.peek()) || is_digit(c.peek()) || c.peek() == '_') ++c.pos;
                if (!c.eat(':')) return fail(a, "bad relocation operator in", c.s);
                auto sym = parse_symbol(c);
                if (sym.empty()) return fail(a, "expected a symbol after relocation operator in", c.s);
                a.symbol = c.s.substr(b, c.pos - b);
                if (c.peek() == '+' || c.peek() == '-') {
                    auto nr = parse_number(c, a.offset);
                    if (nr != NumResult::Ok) return number_error(a, nr, c, "expected a number in");
                }
            } else if (is_digit(c.peek()) || c.peek() == '-' || c.peek() == '+') {
                auto nr = parse_number(c, a.offset);
                if (nr != NumResult::Ok) return number_error(a, nr, c, "expected an offset in");
            } else if (!hash && is_alpha(c.peek())) {
                if (!arm_parse_register(a, c, aarch64, a.index)) return false;
                c.skip_space();
                if (c.eat(',')) {
                    c.skip_space();
                    if (!c.eat("lsl")) return fail(a, "unsupported index extension in", c.s);
                    c.skip_space();
                    c.eat('#');
                    int64_t sh = 0;
                    auto nr = parse_number(c, sh);
                    if (nr != NumResult::Ok) return number_error(a, nr, c, "expected a shift amount in");
                    if (sh < 0 || sh > 3) return fail(a, "shift must be 0 to 3 in", c.s);
                    a.scale = 1 << sh;
                }
            } else {
                return fail(a, "expected an offset or index register in", c.s);
            }
            c.skip_space();
        }
        if (!c.eat(']')) return fail(a, c.done() ? "missing ']' in" : "unexpected characters in", c.done() ? c.s : c.rest());
        if (c.peek() == '!') return fail(a, "writeback addressing not supported in", c.s);
        return finish(a, c);
    }
    const bool hash = c.eat('#');
    if (hash || is_digit(c.peek()) || c.peek() == '-' || c.peek() == '+') return parse_immediate(a, c, "expected a number in");
    std::string_view r = c.take_alnum();
    if (r.empty()) return fail(a, "unrecognised operand", c.rest());
    if (aarch64 ? !aarch64_register(r) : !arm_register(r)) return fail(a, "unknown register", r);
    set_register(a, r);
    return finish(a, c);
}

// ---------------------------------------------------------------------------
// ppc64: `iN` constants; registers `N`, `rN`, `%rN` (also f/v/vs);
// memory `disp(reg)` with disp a number or `sym@reloc`; indexed `reg,reg`.
//
// On both ppc and s390, register 0 in a base position (ppc: D-form base and
// the first register of X-form; s390: base or index) is not read: it means
// "no register". Such a register is left out of base/index.

// A GPR used to form an address: "r0".."r31" (after ppc_reg normalisation).
bool gpr_address(ArgSpec& a, std::string_view& r, bool zero_is_none) {
    if (r.size() < 2 || r[0] != 'r') return fail(a, "register cannot form an address:", r);
    if (zero_is_none && r == "r0") r = {};
    return true;
}

// "r0".."r31": the names bare ppc register numbers are normalised to (the
// result holds views, and "r3" is not in the spec "8@3").
constexpr std::string_view kPpcGprNames[32] = {
    "r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
    "r16", "r17", "r18", "r19", "r20", "r21", "r22", "r23", "r24", "r25", "r26", "r27", "r28", "r29", "r30", "r31"};

// Reads a ppc register: `%r3`, `r3`, or a bare number `3` (normalised "r3").
bool ppc_reg(ArgSpec& a, Cursor& c, std::string_view& out) {
    const bool pct = c.eat('%');
    if (is_digit(c.peek())) {
        if (pct) return fail(a, "expected a register name after '%' in", c.s);
        const size_t b = c.pos;
        while (is_digit(c.peek())) ++c.pos;
        auto d = c.s.substr(b, c.pos - b);
        if (!small_number(d, 0, 31)) return fail(a, "register number out of range", d);
        out = kPpcGprNames[d.size() == 1 ? d[0] - '0' : (d[0] - '0') * 10 + (d[1] - '0')];
        return true;
    }
    return take_register(a, c, out, ppc_register);
}

bool parse_ppc(ArgSpec& a, Cursor& c) {
    if (c.peek() == 'i' && (is_digit(c.peek(1)) || c.peek(1) == '-')) {
        ++c.pos;
        int64_t v = 0;
        auto nr = parse_number(c, v);
        if (nr != NumResult::Ok) return number_error(a, nr, c, "expected a number after 'i' in");
        set_constant(a, v);
        return finish(a, c);
    }
    // disp(reg): a signed number or a symbol, then '('.
    {
        Cursor t = c;
        int64_t off = 0;
        auto nr = parse_number(t, off);
        std::string_view sym;
        if (nr == NumResult::None) sym = parse_symbol(t);
        if ((nr == NumResult::Ok || !sym.empty()) && t.peek() == '(') {
            c = t;
            ++c.pos;
            a.kind = OperandKind::Memory;
            a.offset = off;
            a.symbol = sym;
            if (!ppc_reg(a, c, a.base) || !gpr_address(a, a.base, true)) return false;
            if (!c.eat(')')) return fail(a, c.done() ? "missing ')' in" : "unexpected characters in", c.done() ? c.s : c.rest());
            return finish(a, c);
        }
        if (nr == NumResult::Overflow || nr == NumResult::Ambiguous) return number_error(a, nr, t, "");
    }
    if (c.peek() == '-' || c.peek() == '+')
        return fail(a, "a bare number is a register on ppc64 (constants are written iN):", c.s);
    std::string_view first;
    if (!ppc_reg(a, c, first)) return false;
    if (c.eat(',')) {
        a.kind = OperandKind::Memory;
        a.base = first;
        if (!gpr_address(a, a.base, true)) return false;
        if (!ppc_reg(a, c, a.index) || !gpr_address(a, a.index, false)) return false;
        return finish(a, c);
    }
    set_register(a, first);
    return finish(a, c);
}

// ---------------------------------------------------------------------------
// s390x: `%rN` (also %f, %v, %a), bare-number constants, `D(%rB)`,
// `D(%rX,%rB)`, `D(,%rB)`.

bool s390_reg(ArgSpec& a, Cursor& c, std::string_view& out) {
    if (!c.eat('%')) return fail(a, "expected '%' before register in", c.rest());
    auto r = c.take_alnum();
    if (r.empty()) return fail(a, "missing register name after '%' in", c.s);
    if (!s390_register(r)) return fail(a, "unknown register", r);
    out = r;
    return true;
}

bool parse_s390(ArgSpec& a, Cursor& c) {
    if (c.peek() == '%') {
        std::string_view r;
        if (!s390_reg(a, c, r)) return false;
        set_register(a, r);
        return finish(a, c);
    }
    int64_t v = 0;
    auto nr = parse_number(c, v);
    if (nr == NumResult::Overflow || nr == NumResult::Ambiguous) return number_error(a, nr, c, "");
    if (nr == NumResult::Ok && c.peek() != '(') {
        set_constant(a, v);
        return finish(a, c);
    }
    if (!c.eat('(')) return fail(a, "unrecognised operand", c.rest());
    a.kind = OperandKind::Memory;
    a.offset = v;
    std::string_view first;
    if (c.peek() != ',' && !s390_reg(a, c, first)) return false;
    if (c.eat(',')) {
        if (!s390_reg(a, c, a.base)) return false;
        a.index = first;
    } else {
        a.base = first;
    }
    if (!a.base.empty() && !gpr_address(a, a.base, true)) return false;
    if (!a.index.empty() && !gpr_address(a, a.index, true)) return false;
    if (!c.eat(')')) return fail(a, c.done() ? "missing ')' in" : "unexpected characters in", c.done() ? c.s : c.rest());
    return finish(a, c);
}

// ---------------------------------------------------------------------------
// riscv64: ABI or xN register names, bare-number constants, `off(reg)`,
// `(reg)`, `%lo(sym)(reg)`.

bool riscv_reg(ArgSpec& a, Cursor& c, std::string_view& out) { return take_register(a, c, out, riscv_register); }

bool parse_riscv(ArgSpec& a, Cursor& c) {
    int64_t v = 0;
    auto nr = parse_number(c, v);
    if (nr == NumResult::Overflow || nr == NumResult::Ambiguous) return number_error(a, nr, c, "");
    if (nr == NumResult::Ok && c.peek() != '(') {
        set_constant(a, v);
        return finish(a, c);
    }
    if (nr == NumResult::None && c.peek() == '%') {
        // %lo(sym[+-off]) / %tprel_lo(...) etc.
        const size_t b = c.pos;
        ++c.pos;
        if (!is_lower(c.peek())) return fail(a, "bad relocation operator in", c.s);
        while (is_lower(c.peek()) || is_digit(c.peek()) || c.peek() == '_') ++c.pos;
        if (!c.eat('(')) return fail(a, "bad relocation operator in", c.s);
        if (parse_symbol(c).empty()) return fail(a, "expected a symbol in", c.s);
        if (c.peek() == '+' || c.peek() == '-') {
            nr = parse_number(c, v);
            if (nr != NumResult::Ok) return number_error(a, nr, c, "expected a number in");
            v = 0;  // part of the relocation, not a displacement
        }
        if (!c.eat(')')) return fail(a, "missing ')' in", c.s);
        a.symbol = c.s.substr(b, c.pos - b);
    } else if (nr == NumResult::None && is_alpha(c.peek())) {
        std::string_view r;
        if (!riscv_reg(a, c, r)) return false;
        set_register(a, r);
        return finish(a, c);
    }
    if (!c.eat('(')) return fail(a, "unrecognised operand", c.rest());
    a.kind = OperandKind::Memory;
    a.offset = v;
    if (!riscv_reg(a, c, a.base)) return false;
    if (!riscv_address_register(a.base)) return fail(a, "register cannot be a base:", a.base);
    if (!c.eat(')')) return fail(a, c.done() ? "missing ')' in" : "unexpected characters in", c.done() ? c.s : c.rest());
    return finish(a, c);
}

// Starts with `[-]digits[f]@`: the beginning of an argument.
bool looks_like_arg_start(std::string_view s, size_t i) {
    if (i < s.size() && s[i] == '-') ++i;
    const size_t d = i;
    while (i < s.size() && is_digit(s[i])) ++i;
    if (i == d) return false;
    if (i < s.size() && s[i] == 'f') ++i;
    return i < s.size() && s[i] == '@';
}

}  // namespace

Arch arch_from_elf(uint16_t e_machine, bool is_64bit) {
    switch (e_machine) {
        case 3: return Arch::I386;       // EM_386
        case 62: return Arch::X86_64;    // EM_X86_64 (also x32: same registers)
        case 183: return Arch::AArch64;  // EM_AARCH64
        case 40: return Arch::Arm;       // EM_ARM
        case 21: return Arch::PPC64;     // EM_PPC64 (either endianness)
        case 22: return is_64bit ? Arch::S390X : Arch::Unknown;    // EM_S390
        case 243: return is_64bit ? Arch::RISCV64 : Arch::Unknown;  // EM_RISCV
        default: return Arch::Unknown;
    }
}

const char* arch_name(Arch a) {
    switch (a) {
        case Arch::X86_64: return "x86_64";
        case Arch::I386: return "i386";
        case Arch::AArch64: return "aarch64";
        case Arch::Arm: return "arm";
        case Arch::PPC64: return "ppc64";
        case Arch::S390X: return "s390x";
        case Arch::RISCV64: return "riscv64";
        case Arch::Unknown: break;
    }
    return "unknown";
}

namespace {

// Parses `spec` into `a`, which is default-constructed: in place, so that
// parse_args fills its vector without a copy per argument.
void parse_into(std::string_view spec, Arch arch, ArgSpec& a) {
    while (!spec.empty() && is_space(spec.front())) spec.remove_prefix(1);
    while (!spec.empty() && is_space(spec.back())) spec.remove_suffix(1);
    a.text = spec;
    if (spec.empty()) {
        fail(a, "empty argument spec");
        return;
    }

    // [-]N[f]@
    Cursor c(spec);
    a.is_signed = c.eat('-');
    {
        const size_t b = c.pos;
        int n = 0;
        while (is_digit(c.peek()) && c.pos - b < 4) n = n * 10 + (c.s[c.pos++] - '0');
        const size_t digits = c.pos - b;
        if (c.pos == b) {
            fail(a, spec.find('@') == std::string_view::npos ? "missing size prefix (N@) in"
                                                              : "size before '@' is not a number in",
                 spec);
            return;
        }
        if (is_digit(c.peek())) {
            fail(a, "size too large in", spec);
            return;
        }
        a.is_float = c.eat('f');
        if (!c.eat('@')) {
            fail(a, "expected '@' after size in", spec);
            return;
        }
        if (digits != 1 || (n != 1 && n != 2 && n != 4 && n != 8)) {
            a.size = n;
            fail(a, "unsupported size (expected 1, 2, 4 or 8) in", spec);
            return;
        }
        a.size = n;
    }
    if (c.done()) {
        fail(a, "empty operand in", spec);
        return;
    }
    Cursor op(c.rest());
    switch (arch) {
        case Arch::X86_64: parse_x86(a, op, true); break;
        case Arch::I386: parse_x86(a, op, false); break;
        case Arch::AArch64: parse_arm_like(a, op, true); break;
        case Arch::Arm: parse_arm_like(a, op, false); break;
        case Arch::PPC64: parse_ppc(a, op); break;
        case Arch::S390X: parse_s390(a, op); break;
        case Arch::RISCV64: parse_riscv(a, op); break;
        case Arch::Unknown: fail(a, "unknown architecture; cannot parse operand", op.s); break;
    }
}

}  // namespace

ArgSpec parse_arg(std::string_view spec, Arch arch) {
    ArgSpec a;
    parse_into(spec, arch, a);
    return a;
}

std::vector<ArgSpec> parse_args(std::string_view args, Arch arch) {
    std::vector<ArgSpec> out;
    parse_args(args, arch, out);
    return out;
}

bool detail::next_arg_brackets(std::string_view args, size_t begin, size_t& pos, std::string_view& piece) {
    const auto& cls = kSplitClass;
    const size_t n = args.size();
    const char* s = args.data();
    const size_t b = begin;
    size_t i = begin;
    int depth = 0;
    for (;; ++i) {
        while (i < n && !cls[static_cast<unsigned char>(s[i])]) ++i;
        if (i >= n) break;
        const char ch = s[i];
        if (ch == '[' || ch == '(') {
            ++depth;
        } else if (ch == ']' || ch == ')') {
            if (depth > 0) --depth;
        } else {
            // A blank. Inside brackets (`[sp, 16]`) it separates operand
            // parts, unless what follows starts a new argument (an
            // unbalanced bracket must not swallow the rest of the list).
            if (depth == 0) break;
            size_t j = i;
            while (j < n && is_space(s[j])) ++j;
            if (j >= n || looks_like_arg_start(args, j)) break;
        }
    }
    piece = std::string_view(s + b, i - b);
    pos = i;
    return true;
}

void parse_args(std::string_view args, Arch arch, std::vector<ArgSpec>& out) {
    out.clear();
    size_t pos = 0;
    std::string_view piece;
    while (next_arg(args, pos, piece)) parse_into(piece, arch, out.emplace_back());
}

}  // namespace probekit::elf
