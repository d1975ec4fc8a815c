// USDT argument specs (`-4@%edi`, `8@-16(%rbp)`, `-4@$5`, `8@[sp, 16]`, ...)
// parsed into a structured form, for every architecture sys/sdt.h supports
// that probekit reads: x86-64, i386, aarch64, arm, ppc64le, s390x, riscv64.
//
// Hand-written: the operand syntax is each assembler's own (AT&T on x86,
// `[reg, #off]` on Arm, `off(reg)` on ppc/s390/riscv) and no library parses
// it. An argument that cannot be parsed is reported as such and never makes
// the whole probe fail.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace probekit::elf {

enum class Arch { X86_64, I386, AArch64, Arm, PPC64, S390X, RISCV64, Unknown };

// ELF e_machine (and class, for x86) to Arch.
Arch arch_from_elf(uint16_t e_machine, bool is_64bit);
const char* arch_name(Arch a);

enum class OperandKind {
    Register,  // value is in `reg`
    Memory,    // value is at reg_value(base) + offset (+ reg_value(index) * scale)
    Constant,  // value is `constant`
    Invalid,   // could not be parsed: see `error`
};

// The strings are views into the spec passed to parse_arg (or into static
// text): the spec must outlive the ArgSpec. Only `error` owns its text.
struct ArgSpec {
    int size = 0;            // bytes: 1, 2, 4 or 8
    bool is_signed = false;
    bool is_float = false;   // the `f` suffix (`8f@%xmm0`): most consumers reject it
    OperandKind kind = OperandKind::Invalid;
    std::string_view reg;     // Register: the register as written, without '%' ("edi", "x0", "r3")
    std::string_view base;    // Memory: base register ("rbp", "sp"); empty for an absolute address
    std::string_view index;   // Memory: index register, or empty
    int scale = 1;            // Memory: index scale
    int64_t offset = 0;       // Memory: displacement
    std::string_view symbol;  // Memory: a symbol in the displacement (`counter(%rip)`, `var@tpoff`), or empty
    std::string_view segment; // Memory: segment override (`fs`), or empty
    int64_t constant = 0;     // Constant
    std::string_view text;    // the operand as written
    std::string error;        // Invalid: why
};

// Parses one argument spec such as "-4@%edi". Never throws; an unparseable
// spec comes back with kind Invalid and an error message.
ArgSpec parse_arg(std::string_view spec, Arch arch);

// Splits a note's argument string ("-4@%edi 8@%rax") and parses each.
std::vector<ArgSpec> parse_args(std::string_view args, Arch arch);
// The same into `out` (cleared first): reusing one vector across the sites
// of a listing saves an allocation per site.
void parse_args(std::string_view args, Arch arch, std::vector<ArgSpec>& out);

namespace detail {
// What next_arg stops at: blanks (1) and brackets (2); everything else is 0.
inline constexpr auto kSplitClass = [] {
    std::array<uint8_t, 256> t{};
    for (char c : {' ', '\t', '\n', '\r', '\v', '\f'}) t[static_cast<unsigned char>(c)] = 1;
    for (char c : {'[', ']', '(', ')'}) t[static_cast<unsigned char>(c)] = 2;
    return t;
}();
// The rest of next_arg for an argument with brackets (starting at `begin`,
// blanks already skipped), where a blank does not always end it.
bool next_arg_brackets(std::string_view args, size_t begin, size_t& pos, std::string_view& piece);
}  // namespace detail

// The arguments of a note's argument string one at a time, split exactly as
// parse_args splits them: from `pos` (0 to start), sets `piece` to the next
// argument as written (parse_arg(piece) is what parse_args gives for it) and
// advances `pos`; false when there is none left. For callers that cache
// results by argument text: a listing has few distinct arguments.
// Inline for the common argument without brackets ("-4@%edi"): a listing
// splits every site's arguments.
inline bool next_arg(std::string_view args, size_t& pos, std::string_view& piece) {
    const auto& cls = detail::kSplitClass;
    const size_t n = args.size();
    const char* s = args.data();
    size_t i = pos;
    while (i < n && cls[static_cast<unsigned char>(s[i])] == 1) ++i;
    if (i >= n) {
        pos = n;
        return false;
    }
    const size_t b = i;
    while (i < n && cls[static_cast<unsigned char>(s[i])] == 0) ++i;
    if (i < n && cls[static_cast<unsigned char>(s[i])] == 2) return detail::next_arg_brackets(args, b, pos, piece);
    piece = std::string_view(s + b, i - b);
    pos = i;
    return true;
}

}  // namespace probekit::elf
