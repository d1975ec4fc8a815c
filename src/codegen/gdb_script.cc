#include "codegen/gdb_script.h"

namespace probekit::codegen {
namespace {

// gdb's printf conversions, per ValueStyle. $_probe_argN has the note's size
// and sign; the `ll` forms print it whole (a plain %d would truncate a
// 64-bit value to int). gdb prints a NULL %s as "(null)".
constexpr Conversions kConversions = {"%lld", "%llu", "0x%llx", "%s"};

}  // namespace

std::string gdb_script(const spec::Spec& spec, const ScriptOptions& options) {
    std::string out = "# " + generated_notice(options.source_name) + "\n";
    out += "# Prints every probe hit with its arguments and continues:\n"
           "#   gdb -x THIS_FILE -ex run --args PROGRAM ARGS   (or gdb -p PID -x THIS_FILE)\n"
           "# Floats, doubles and pointers print as hex bits. While the breakpoints exist gdb\n"
           "# holds each probe's semaphore up, so gated probes fire too.\n"
           "set breakpoint pending on\n";
    for (const auto& prov : spec.providers) {
        for (const auto& p : prov.probes) {
            std::string format = prov.name + ":" + p.name, values;
            if (!p.args.empty()) format += " " + labelled_format(p.args, p.args.size(), kConversions);
            for (size_t i = 0; i < p.args.size(); ++i) {
                const std::string arg = "$_probe_arg" + std::to_string(i);
                // The register holds an integer: %s needs a pointer type.
                values += ", " + (value_style(p.args[i].resolved.kind) == ValueStyle::Text ? "(const char *) " + arg : arg);
            }
            out += "\n# " + prov.name + ":" + signature(p) + "\n";
            out += "break -probe-stap " + prov.name + ":" + p.name + "\ncommands\n  silent\n  printf \"" + format +
                   "\\n\"" + values + "\n  continue\nend\n";
        }
    }
    return out;
}

}  // namespace probekit::codegen
