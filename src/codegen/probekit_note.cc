#include "codegen/probekit_note.h"

#include <algorithm>
#include <cstdio>

#include "codegen/text.h"

namespace probekit::codegen {
namespace {

// The inside of a gas string literal. The entry is top-level (basic) asm,
// which the compiler copies as it is: '%' and braces are not special.
bool asm_plain(const std::string& s) {
    return std::all_of(s.begin(), s.end(), [](unsigned char c) { return c >= 0x20 && c < 0x7f && c != '"' && c != '\\'; });
}

std::string asm_text(const std::string& s) {
    std::string out;
    for (unsigned char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c < 0x20 || c >= 0x7f) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\%03o", c);
            out += buf;
        } else {
            out += static_cast<char>(c);
        }
    }
    return out;
}

}  // namespace

// The sdt size of a typed argument as the marker writes it (-N signed, N
// unsigned), from the type fire() converts it to: known when the header is
// generated, so the compiler has no operand to evaluate per site. LP64: the
// marker uses <sys/sdt.h> on x32. Plain char's sign is the compiler's choice.
std::string sdt_size_text(const spec::Arg& a) {
    const auto& r = a.resolved;
    switch (r.kind) {
        case spec::ArgKind::SignedInt: return "-" + std::to_string(r.size);
        case spec::ArgKind::UnsignedInt: return std::to_string(r.size);
        case spec::ArgKind::Char: return "PROBEKIT_SDT_CHAR";
        case spec::ArgKind::Bool: return "1";
        case spec::ArgKind::Float: return "4";  // its bits, an unsigned int
        case spec::ArgKind::Double:
        case spec::ArgKind::Pointer:
        case spec::ArgKind::String: return "8";
        case spec::ArgKind::Opaque: break;
    }
    return "0";  // untyped: the site measures it (PROBEKIT_SITEn_EXPR)
}

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

std::string probekit_note_macros() {
    const std::string type = std::to_string(kNoteTypeProbe), version = std::to_string(kNoteVersion);
    return "#ifndef PROBEKIT_GEN_V1_META\n"
           "#define PROBEKIT_GEN_V1_META(prov, name, nargs, args, doc) \\\n"
           "  \".ifndef .Lprobekit_meta.\" #prov \".\" #name \"\\n.set .Lprobekit_meta.\" #prov \".\" #name \", 1\\n\" \\\n"
           "  \".pushsection .note.probekit,\\\"G\\\",\\\"note\\\",probekit.meta.\" #prov \".\" #name \",comdat\\n.balign 4\\n\" \\\n"
           "  \".4byte 996f-995f, 998f-997f, " + type + "\\n995: .asciz \\\"probekit\\\"\\n996: .balign 4\\n\" \\\n"
           "  \"997: .byte " + version + ", \" #nargs \", 0, 0\\n.asciz \\\"\" #prov \"\\\"\\n.asciz \\\"\" #name \"\\\"\\n\" \\\n"
           "  args \".asciz \\\"\" doc \"\\\"\\n998: .balign 4\\n.popsection\\n\" \\\n"
           "  PROBEKIT_GEN_V1_DESC_ASM(prov, name, nargs, args, doc) \".endif\\n\"\n"
           // The runtime's descriptor (include/probekit/runtime_abi.h): in
           // the same group, so that each linked object keeps one; its
           // argument records are the note's, in an allocated section. Weak
           // as well: clang's LTO takes the symbols of top-level asm into its
           // symbol table but not their groups, and would see two units'
           // definitions as duplicates.
           "#define PROBEKIT_GEN_V1_DESC_ASM(prov, name, nargs, args, doc) \\\n"
           "  \".pushsection probekit_probes_v1,\\\"awGR\\\",\\\"progbits\\\",probekit.meta.\" #prov \".\" #name \",comdat\\n\" \\\n"
           "  \".balign 8\\n.weak probekit_gen_v1_desc_\" #prov \"_\" #name \"\\n.hidden probekit_gen_v1_desc_\" #prov \"_\" #name \"\\n\" \\\n"
           "  \"probekit_gen_v1_desc_\" #prov \"_\" #name \": .4byte 1, \" #nargs \"\\n\" \\\n"
           "  \".8byte 981f, 982f, \" #prov \"_\" #name \"_semaphore, 983f, 984f, 0\\n.popsection\\n\" \\\n"
           "  \".pushsection .rodata.probekit,\\\"aG\\\",\\\"progbits\\\",probekit.meta.\" #prov \".\" #name \",comdat\\n\" \\\n"
           "  \"981: .asciz \\\"\" #prov \"\\\"\\n982: .asciz \\\"\" #name \"\\\"\\n983: \" args \"984: .asciz \\\"\" doc \"\\\"\\n.popsection\\n\"\n"
           "#define PROBEKIT_GEN_V1_META_ARG(kind, size, name, type) \\\n"
           "  \".byte \" #kind \", \" PROBEKIT_STR_(size) \"\\n.asciz \\\"\" name \"\\\"\\n.asciz \\\"\" type \"\\\"\\n\"\n"
           "#endif\n";
}

void probekit_note_entry(Text& out, const std::string& provider, const spec::Probe& probe) {
    // A string goes through two languages: the assembler's, then C's.
    auto text = [&](const std::string& s) {
        if (asm_plain(s)) out.raw('"', CEscaped{s}, '"');  // nearly always
        else out.raw('"', CEscaped{asm_text(s)}, '"');
    };
    out.raw("PROBEKIT_GEN_V1_META(", provider, ", ", probe.name, ", ", probe.args.size(), ", ");
    for (size_t i = 0; i < probe.args.size(); ++i) {
        const auto& arg = probe.args[i];
        out.raw("PROBEKIT_GEN_V1_META_ARG(", size_t{note_kind(arg.resolved.kind)}, ", ", sdt_size_text(arg), ", ");
        text(arg.name);
        out.raw(", ");
        text(arg.type.spelling());
        out.raw(") ");
    }
    out.raw(", ");
    text(probe.doc);
    out.raw(")");
}

}  // namespace probekit::codegen
