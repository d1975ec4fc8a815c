#include "codegen/bpftrace_script.h"

#include <algorithm>
#include <cctype>

namespace probekit::codegen {
namespace {

// bpftrace's printf conversions, per ValueStyle: its arguments are 64-bit
// values, already sign- or zero-extended from the note's size.
constexpr Conversions kConversions = {"%ld", "%lu", "0x%lx", "%s"};

// The attach point's file part: quoted when it holds characters that would
// end it (`:`) or the clause (spaces). The command refuses `"` and `\`.
std::string attach_path(const std::string& path) {
    bool plain = std::all_of(path.begin(), path.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '/' || c == '.' || c == '_' || c == '-' || c == '+';
    });
    return plain ? path : "\"" + path + "\"";
}

}  // namespace

std::string bpftrace_script(const spec::Spec& spec, const ScriptOptions& options) {
    std::string out = "#!/usr/bin/env bpftrace\n// " + generated_notice(options.source_name) + "\n";
    out += "// Prints every probe of " + options.binary + " with its arguments. Run as root:\n"
           "//   bpftrace THIS_FILE -c '" + options.binary + " ARGS'   (or attach first, then start it)\n"
           "// Floats, doubles and pointers print as hex bits; strings are read with str(),\n"
           "// at most BPFTRACE_STRLEN (64) bytes, and empty if their page was never touched.\n";
    const std::string path = attach_path(options.binary);
    for (const auto& prov : spec.providers) {
        for (const auto& p : prov.probes) {
            const size_t n = std::min(p.args.size(), kBpftraceMaxArgs);
            out += "\n// " + prov.name + ":" + signature(p) + "\n";
            if (n < p.args.size())
                out += "// bpftrace 0.17 reads arg0..arg5 only: arguments " + std::to_string(n + 1) + ".." +
                       std::to_string(p.args.size()) + " are not printed (\"...\").\n";
            std::string format = prov.name + ":" + p.name, values;
            if (n) format += " " + labelled_format(p.args, n, kConversions);
            if (n < p.args.size()) format += " ...";
            for (size_t i = 0; i < n; ++i) {
                const std::string arg = "arg" + std::to_string(i);
                values += ", " + (value_style(p.args[i].resolved.kind) == ValueStyle::Text ? "str(" + arg + ")" : arg);
            }
            out += "usdt:" + path + ":" + prov.name + ":" + p.name + "\n{\n    printf(\"" + format + "\\n\"" + values + ");\n}\n";
        }
    }
    return out;
}

}  // namespace probekit::codegen
