#include "trace/fetch_arg.h"

#include <charconv>

namespace probekit::trace {

std::string_view kernel_register(std::string_view r) {
    struct Name {
        const char* sdt[4];
        const char* kernel;
    };
    static const Name table[] = {
        {{"rax", "eax", "ax", "al"}, "ax"},   {{"rbx", "ebx", "bx", "bl"}, "bx"},   {{"rcx", "ecx", "cx", "cl"}, "cx"},
        {{"rdx", "edx", "dx", "dl"}, "dx"},   {{"rsi", "esi", "si", "sil"}, "si"}, {{"rdi", "edi", "di", "dil"}, "di"},
        {{"rbp", "ebp", "bp", "bpl"}, "bp"}, {{"rsp", "esp", "sp", "spl"}, "sp"}, {{"rip", "eip", nullptr, nullptr}, "ip"},
    };
    for (const auto& n : table)
        for (const char* s : n.sdt)
            if (s && r == s) return n.kernel;
    static const char* const high[] = {"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15"};
    if (r.size() >= 2 && r[0] == 'r') {
        int n = 0;
        auto [p, ec] = std::from_chars(r.data() + 1, r.data() + r.size(), n);
        const std::string_view rest(p, static_cast<size_t>(r.data() + r.size() - p));
        if (ec == std::errc() && n >= 8 && n <= 15 && (rest.empty() || rest == "d" || rest == "w" || rest == "b" || rest == "l"))
            return high[n - 8];
    }
    return {};
}

std::optional<std::string> string_fetch_arg(const elf::ArgSpec& a) {
    std::string pointer;  // where the string's address is
    if (a.kind == elf::OperandKind::Register) {
        const std::string_view r = kernel_register(a.reg);
        if (r.empty()) return std::nullopt;
        pointer = "%" + std::string(r);
    } else if (a.kind == elf::OperandKind::Memory) {
        if (!a.index.empty() || !a.symbol.empty() || !a.segment.empty() || a.base.empty()) return std::nullopt;
        const std::string_view r = kernel_register(a.base);
        if (r.empty()) return std::nullopt;
        pointer = (a.offset < 0 ? "-" : "+") +
                  std::to_string(a.offset < 0 ? -static_cast<uint64_t>(a.offset) : static_cast<uint64_t>(a.offset)) +
                  "(%" + std::string(r) + ")";
    } else {
        return std::nullopt;
    }
    return "+0(" + pointer + "):string";
}

}  // namespace probekit::trace
