// libFuzzer target for the spec front end (lexer, parser, sema) and, for every
// input that loads, the code generators that read its result.
//
// Invariants checked on every input (a violation traps, so libFuzzer saves
// the input as a crash):
//   - load_text() fails exactly when an error was reported;
//   - every diagnostic names a file: its format() starts with "fuzz.d" (or
//     "<input>"), unless the input itself carries a cpp linemarker
//     (`# LINE "FILE"`), which legitimately renames the file;
//   - a loaded spec keeps the path it was loaded as; its provider, probe and
//     argument names are C identifiers; every backend produces output, and
//     in the C outputs (both site backends) every comment is closed and no
//     string literal runs past its line (doc text cannot break them);
//   - the names the native header declares (semaphores, per-probe wrappers
//     and macros, helpers) all differ.
//
// Optional, stricter checks:
//   -DPROBEKIT_FUZZ_STRICT_LOCATIONS=1 (build time): also reject "<input>"
//     (a diagnostic without a file) when the input has no '#' at all.
#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>

#include "codegen/dtrace_compat.h"
#include "codegen/json_manifest.h"
#include "codegen/marker_backend.h"
#include "codegen/native_header.h"
#include "spec/diagnostics.h"
#include "spec/load.h"
#include "spec/names.h"

#ifndef PROBEKIT_FUZZ_STRICT_LOCATIONS
#define PROBEKIT_FUZZ_STRICT_LOCATIONS 0
#endif

namespace {

constexpr std::string_view kPath = "fuzz.d";

void check(bool ok) {
    if (!ok) __builtin_trap();
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// A linemarker can only come from a line whose first non-blank byte is '#'.
// Being generous here (any '#') keeps the check free of false alarms.
bool may_have_linemarker(std::string_view text) { return text.find('#') != std::string_view::npos; }

void check_diagnostics(const probekit::spec::Diagnostics& diags, std::string_view text) {
    const bool renamed = may_have_linemarker(text);
    for (const auto& d : diags.all()) {
        const std::string f = d.format();
        check(f.find(d.severity == probekit::spec::Severity::Error ? ": error: " : ": warning: ") != std::string::npos);
        if (d.loc.file == kPath) {
            check(starts_with(f, kPath));
        } else if (d.loc.file.empty()) {
            // No file: only `# LINE ""` should do that (strict mode), and
            // format() must still say where, as "<input>".
            check(starts_with(f, "<input>"));
            if (PROBEKIT_FUZZ_STRICT_LOCATIONS) check(renamed);
        } else {
            // Any other file name must have come from a linemarker in the input.
            check(renamed);
            check(starts_with(f, d.loc.file.str()));
        }
    }
}

bool is_identifier(const std::string& s) {
    if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
    for (char c : s)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
    return true;
}

// Scans C text (comments, string and character literals) and says whether it
// ends outside a comment and no literal runs past the end of its line.
bool comments_closed(std::string_view s) {
    enum { Code, Comment, Str, Chr } st = Code;
    for (size_t i = 0; i < s.size(); ++i) {
        const char c = s[i];
        const char n = i + 1 < s.size() ? s[i + 1] : '\0';
        switch (st) {
            case Code:
                if (c == '/' && n == '*') st = Comment, ++i;
                else if (c == '/' && n == '/') i = std::min(s.find('\n', i), s.size());
                else if (c == '"') st = Str;
                else if (c == '\'') st = Chr;
                break;
            case Comment:
                if (c == '*' && n == '/') st = Code, ++i;
                break;
            case Str:
            case Chr:
                if (c == '\\') ++i;
                else if (c == (st == Str ? '"' : '\'')) st = Code;
                else if (c == '\n') return false;
                break;
        }
    }
    return st == Code;
}

void check_spec(const probekit::spec::Spec& spec) {
    check(spec.path == kPath);
    std::set<std::string> symbols = {"probekit_gen_v1", "probekit_gen_v1_f32_bits", "probekit_gen_v1_f64_bits"};
    for (const auto& prov : spec.providers) {
        check(is_identifier(prov.name));
        for (const auto& p : prov.probes) {
            check(is_identifier(p.name));
            check(p.args.size() <= 12);
            for (const auto& a : p.args) check(a.name.empty() || is_identifier(a.name));
            namespace n = probekit::spec;
            const std::string macro = n::macro_name(prov.name, p.name);
            const std::string internal = n::internal_name(prov.name, p.name);
            for (const std::string& sym : {macro, macro + "_ENABLED", macro + "_GATED", n::semaphore_name(prov.name, p.name),
                                           internal, internal + "_slow", n::meta_macro_name(prov.name, p.name)}) {
                check(!n::is_reserved_name(sym) || sym.rfind("PROBEKIT_META_", 0) == 0);
                check(symbols.insert(sym).second);
            }
        }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    probekit::spec::Diagnostics diags;
    auto spec = probekit::spec::load_text(text, std::string(kPath), diags);

    check(spec.has_value() != diags.has_errors());
    check_diagnostics(diags, text);
    if (!spec) return 0;

    check_spec(*spec);

    // Both site backends: sys/sdt.h, and probekit's own marker, whose
    // .note.probekit asm carries names, types and doc text in string literals.
    const std::string sdt_header = probekit::codegen::native_header(*spec, probekit::codegen::SysSdtMarker{}, {});
    check(starts_with(sdt_header, "/* Generated by probekit"));
    check(comments_closed(sdt_header));
    const std::string native = probekit::codegen::native_header(*spec, probekit::codegen::NativeMarker{}, {});
    check(starts_with(native, "/* Generated by probekit"));
    check(comments_closed(native));

    const std::string dheader = probekit::codegen::dtrace_header(*spec);
    check(!dheader.empty());
    check(comments_closed(dheader));
    const std::string dsource = probekit::codegen::dtrace_semaphore_source(*spec);
    check(!dsource.empty());
    check(comments_closed(dsource));

    const std::string manifest = probekit::codegen::json_manifest(*spec);
    check(starts_with(manifest, "{"));
    return 0;
}
