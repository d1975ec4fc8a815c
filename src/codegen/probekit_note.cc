#include "codegen/probekit_note.h"

#include <cstdio>

namespace probekit::codegen {
namespace {

// A gas string literal, then escaped for an extended-asm template: '%' and
// the x86 dialect braces are special there.
std::string asm_string(const std::string& s) {
    std::string out = "\"";
    for (unsigned char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c < 0x20 || c >= 0x7f) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\%03o", c);
            out += buf;
        } else if (c == '%' || c == '{' || c == '|' || c == '}') {
            out += '%';
            out += static_cast<char>(c);
        } else {
            out += static_cast<char>(c);
        }
    }
    return out + "\"";
}

}  // namespace

uint8_t note_kind(spec::ArgKind k) {
    switch (k) {
        case spec::ArgKind::Opaque: return 0;
        case spec::ArgKind::SignedInt: return 1;
        case spec::ArgKind::UnsignedInt: return 2;
        case spec::ArgKind::Char: return 3;
        case spec::ArgKind::Bool: return 4;
        case spec::ArgKind::Float: return 5;
        case spec::ArgKind::Double: return 6;
        case spec::ArgKind::Pointer: return 7;
        case spec::ArgKind::String: return 8;
    }
    return 0;
}

std::string probekit_note_asm(const std::string& provider, const spec::Probe& probe) {
    const std::string id = provider + "." + probe.name;
    std::string a;
    a += ".ifndef .Lprobekit_meta." + id + "\n";
    a += ".set .Lprobekit_meta." + id + ", 1\n";
    a += ".pushsection .note.probekit,\"G\",\"note\",probekit.meta." + id + ",comdat\n";
    a += ".balign 4\n";
    a += ".4byte 996f-995f, 998f-997f, " + std::to_string(kNoteTypeProbe) + "\n";
    a += "995: .asciz \"probekit\"\n";
    a += "996: .balign 4\n";
    a += "997: .byte " + std::to_string(kNoteVersion) + ", " + std::to_string(probe.args.size()) + ", 0, 0\n";
    a += ".asciz " + asm_string(provider) + "\n";
    a += ".asciz " + asm_string(probe.name) + "\n";
    for (size_t i = 0; i < probe.args.size(); ++i) {
        const auto& arg = probe.args[i];
        a += ".byte " + std::to_string(note_kind(arg.resolved.kind)) + ", %c[s" + std::to_string(i) + "]\n";
        a += ".asciz " + asm_string(arg.name) + "\n";
        a += ".asciz " + asm_string(arg.type.spelling()) + "\n";
    }
    a += ".asciz " + asm_string(probe.doc) + "\n";
    a += "998: .balign 4\n";
    a += ".popsection\n";
    a += ".endif\n";
    return a;
}

}  // namespace probekit::codegen
