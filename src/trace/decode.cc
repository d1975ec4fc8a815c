#include "trace/decode.h"

#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string_view>

#include "trace/event_format.h"

namespace probekit::trace {
namespace {

struct RegRef {
    int slot = -1;   // index into the sampled registers
    int shift = 0;   // 8 for ah, bh, ch, dh
};

// x86-64 register names (any width) to the sample slot. The slot order is
// the kernel's perf_regs order restricted to kRegsMask: ax bx cx dx si di
// bp sp ip, then r8..r15.
RegRef reg_ref(std::string_view r) {
    struct Name {
        const char* names[5];
        int slot;
    };
    static const Name table[] = {
        {{"rax", "eax", "ax", "al", nullptr}, 0}, {{"rbx", "ebx", "bx", "bl", nullptr}, 1},
        {{"rcx", "ecx", "cx", "cl", nullptr}, 2}, {{"rdx", "edx", "dx", "dl", nullptr}, 3},
        {{"rsi", "esi", "si", "sil", nullptr}, 4}, {{"rdi", "edi", "di", "dil", nullptr}, 5},
        {{"rbp", "ebp", "bp", "bpl", nullptr}, 6}, {{"rsp", "esp", "sp", "spl", nullptr}, 7},
        {{"rip", "eip", nullptr, nullptr, nullptr}, 8},
    };
    for (const auto& n : table)
        for (const char* s : n.names)
            if (s && r == s) return {n.slot, 0};
    if (r == "ah" || r == "bh" || r == "ch" || r == "dh") return {r[0] == 'a' ? 0 : r[0] == 'b' ? 1 : r[0] == 'c' ? 2 : 3, 8};
    // r8..r15 with an optional width suffix (d, w, b, l)
    if (r.size() >= 2 && r[0] == 'r' && r[1] >= '0' && r[1] <= '9') {
        int n = 0;
        auto [p, ec] = std::from_chars(r.data() + 1, r.data() + r.size(), n);
        std::string_view rest(p, static_cast<size_t>(r.data() + r.size() - p));
        if (ec == std::errc() && n >= 8 && n <= 15 && (rest.empty() || rest == "d" || rest == "w" || rest == "b" || rest == "l"))
            return {9 + (n - 8), 0};
    }
    return {};
}

std::optional<uint64_t> reg_value(std::string_view name, const HitContext& hit, const char*& why) {
    const RegRef r = reg_ref(name);
    if (r.slot < 0) {
        why = "register not sampled";
        return std::nullopt;
    }
    if (hit.regs.size() < kRegsCount) {
        why = "no registers in the sample";
        return std::nullopt;
    }
    return hit.regs[static_cast<size_t>(r.slot)] >> r.shift;
}

bool read_remote(pid_t pid, uint64_t addr, void* out, size_t n) {
    iovec local{out, n}, remote{reinterpret_cast<void*>(addr), n};
    return process_vm_readv(pid, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(n);
}

uint64_t extend(uint64_t v, int size, bool is_signed) {
    if (size >= 8 || size <= 0) return v;
    const unsigned bits = static_cast<unsigned>(size) * 8;
    v &= (uint64_t{1} << bits) - 1;
    if (is_signed && (v >> (bits - 1)) & 1) v |= ~uint64_t{0} << bits;
    return v;
}

void append_num(util::OutBuffer& out, auto v) {
    char* p = out.reserve(32);
    out.commit(std::to_chars(p, p + 32, v).ptr);
}

// Shortest text that reads back as the same float or double. JSON has no
// NaN or infinity: there they are strings.
template <typename F>
void append_real(util::OutBuffer& out, F v, Quote q) {
    const bool quote = q == Quote::Json && !std::isfinite(v);
    if (quote) out.put('"');
    append_num(out, v);
    if (quote) out.put('"');
}

void append_quoted(util::OutBuffer& out, std::string_view s, bool truncated, Quote q) {
    out.put('"');
    for (unsigned char c : s) {
        if (c == '"' || c == '\\') {
            out.put('\\');
            out.put(static_cast<char>(c));
        } else if (c == '\n') {
            out.append("\\n");
        } else if (c == '\t') {
            out.append("\\t");
        } else if (c < 0x20 || (q == Quote::Text && c >= 0x7f)) {
            // JSON strings are UTF-8 and keep bytes >= 0x80 as they are; text
            // lines show them escaped so that a line stays one line of ASCII.
            char b[8];
            const int n = q == Quote::Json ? std::snprintf(b, sizeof b, "\\u%04x", c) : std::snprintf(b, sizeof b, "\\x%02x", c);
            out.append(b, static_cast<size_t>(n));
        } else {
            out.put(static_cast<char>(c));
        }
    }
    out.put('"');
    if (truncated) out.append(q == Quote::Text ? "..." : "");
}

}  // namespace

std::optional<uint64_t> arg_value(const elf::ArgSpec& a, const HitContext& hit, const char*& why) {
    uint64_t raw = 0;
    switch (a.kind) {
    case elf::OperandKind::Constant:
        raw = static_cast<uint64_t>(a.constant);
        break;
    case elf::OperandKind::Register: {
        auto v = reg_value(a.reg, hit, why);
        if (!v) return std::nullopt;
        raw = *v;
        break;
    }
    case elf::OperandKind::Memory: {
        if (!a.symbol.empty() || !a.segment.empty()) {
            why = "symbolic or segment-relative operand";
            return std::nullopt;
        }
        uint64_t addr = static_cast<uint64_t>(a.offset);
        if (!a.base.empty()) {
            auto b = reg_value(a.base, hit, why);
            if (!b) return std::nullopt;
            addr += *b;
        }
        if (!a.index.empty()) {
            auto i = reg_value(a.index, hit, why);
            if (!i) return std::nullopt;
            addr += *i * static_cast<uint64_t>(a.scale);
        }
        const size_t n = a.size > 0 && a.size <= 8 ? static_cast<size_t>(a.size) : 8;
        unsigned char bytes[8] = {};
        const uint64_t sp = hit.regs.size() >= kRegsCount ? hit.regs[7] : 0;
        const bool frame = a.base == "rsp" || a.base == "rbp" || a.base == "esp" || a.base == "ebp";
        if (frame) {
            // The probed function's frame: only the sampled copy is the value
            // at the hit; the live frame may be gone by now.
            if (addr < sp || addr - sp + n > hit.stack.size()) {
                why = "beyond the sampled stack";
                return std::nullopt;
            }
            std::memcpy(bytes, hit.stack.data() + (addr - sp), n);
        } else if (!read_remote(hit.pid, addr, bytes, n)) {
            why = "unreadable memory";
            return std::nullopt;
        }
        std::memcpy(&raw, bytes, sizeof raw);  // little-endian: the low n bytes are the value
        break;
    }
    case elf::OperandKind::Invalid:
        why = "unparsed argument spec";
        return std::nullopt;
    }
    return extend(raw, a.size, a.is_signed);
}

bool read_string(pid_t pid, uint64_t addr, size_t max, std::string& out, bool& truncated) {
    out.clear();
    truncated = false;
    const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    char buf[4096];
    while (out.size() < max) {
        // Never across a page boundary: process_vm_readv does not split an
        // iovec, so a read that runs into an unmapped page returns nothing.
        size_t n = std::min<size_t>({max - out.size(), sizeof buf, static_cast<size_t>(page - addr % page)});
        iovec local{buf, n}, remote{reinterpret_cast<void*>(addr), n};
        const ssize_t got = process_vm_readv(pid, &local, 1, &remote, 1, 0);
        if (got <= 0) return !out.empty();
        const void* nul = std::memchr(buf, 0, static_cast<size_t>(got));
        if (nul) {
            out.append(buf, static_cast<size_t>(static_cast<const char*>(nul) - buf));
            return true;
        }
        out.append(buf, static_cast<size_t>(got));
        addr += static_cast<uint64_t>(got);
    }
    truncated = true;
    return true;
}

void format_value(util::OutBuffer& out, uint8_t kind, const elf::ArgSpec& a, uint64_t v, const HitContext& hit,
                  size_t arg, const FormatOptions& opt) {
    // .note.probekit kinds (docs/note-probekit.md): 1 signed, 2 unsigned,
    // 3 char, 4 bool, 5 float, 6 double, 7 pointer, 8 string.
    switch (kind) {
    case 1:
    case 3:
        append_num(out, static_cast<int64_t>(v));
        return;
    case 2:
        append_num(out, v);
        return;
    case 4:
        out.append(v ? "true" : "false");
        return;
    case 5: {  // floats travel as their IEEE bits
        float f;
        const uint32_t bits = static_cast<uint32_t>(v);
        std::memcpy(&f, &bits, sizeof f);
        append_real(out, f, opt.quote);
        return;
    }
    case 6: {
        double d;
        std::memcpy(&d, &v, sizeof d);
        append_real(out, d, opt.quote);
        return;
    }
    case 7: {  // hex, a string in JSON (whose numbers lose precision past 2^53 in most readers)
        char b[24];
        const char* fmt = opt.quote == Quote::Json ? "\"0x%llx\"" : "0x%llx";
        out.append(b, static_cast<size_t>(std::snprintf(b, sizeof b, fmt, static_cast<unsigned long long>(v))));
        return;
    }
    case 8: {
        if (v == 0) {
            out.append("null");
            return;
        }
        if (arg < hit.string_field.size() && hit.string_field[arg] >= 0) {
            // Copied by the kernel at the hit: the program may have freed it since.
            auto s = data_loc_string(hit.raw, static_cast<uint32_t>(hit.string_field[arg]));
            if (!s) {
                out.append(opt.quote == Quote::Json ? "null" : "<unreadable>");
                return;
            }
            append_quoted(out, s->substr(0, opt.string_max), s->size() > opt.string_max, opt.quote);
            return;
        }
        std::string s;
        bool truncated = false;
        if (!read_string(hit.pid, v, opt.string_max, s, truncated)) {
            out.append(opt.quote == Quote::Json ? "null" : "<unreadable>");
            return;
        }
        append_quoted(out, s, truncated, opt.quote);
        return;
    }
    default:
        if (a.is_signed) append_num(out, static_cast<int64_t>(v));
        else append_num(out, v);
    }
}

}  // namespace probekit::trace
