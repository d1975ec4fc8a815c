#include "codegen/stap_script.h"

#include <algorithm>
#include <set>

#include "spec/names.h"

namespace probekit::codegen {
namespace {

// The identifiers SystemTap 4.8's parser reserves (checked with `stap -p1`);
// `argstr` is taken by the alias itself.
bool is_taken(const std::string& name) {
    static const std::set<std::string> words = {
        "probe", "global", "private", "function", "if",       "else",  "for",  "foreach", "in",  "limit", "return",
        "delete", "while", "break",   "continue", "next",     "string", "long", "try",    "catch", "argstr"};
    return words.count(name) != 0;
}

// printf conversions of stap's sprintf, per ValueStyle.
constexpr Conversions kConversions = {"%d", "%u", "0x%x", "%s"};

}  // namespace

std::vector<std::string> stap_variables(const spec::Probe& probe) {
    std::vector<std::string> names;
    for (size_t i = 0; i < probe.args.size(); ++i) {
        std::string name = spec::arg_label(probe.args[i].name, i);
        if (is_taken(name)) name += '_';
        // A repeated spec name (a warning), or a name `arg2` meeting the
        // unnamed second argument: each variable must stay distinct.
        while (std::find(names.begin(), names.end(), name) != names.end()) name += "_" + std::to_string(i + 1);
        names.push_back(std::move(name));
    }
    return names;
}

std::string stap_tapset(const spec::Spec& spec, const ScriptOptions& options) {
    std::string out = "// " + generated_notice(options.source_name) + "\n";
    out += "// SystemTap probe aliases for the probes of " + options.binary + ". Each alias binds\n"
           "// the arguments by name (strings read as text, floats as their bits) and sets\n"
           "// argstr, e.g.: stap -I DIR -e 'probe PROVIDER.* { printf(\"%s %s\\n\", pn(), argstr) }'\n";
    for (const auto& prov : spec.providers) {
        for (const auto& p : prov.probes) {
            const auto vars = stap_variables(p);
            out += "\n// " + prov.name + ":" + signature(p) + "\n";
            out += "probe " + spec::stap_alias_name(prov.name, p.name) + " = process(\"" + options.binary +
                   "\").provider(\"" + prov.name + "\").mark(\"" + p.name + "\")\n{\n";
            std::string values;
            for (size_t i = 0; i < p.args.size(); ++i) {
                const std::string arg = "$arg" + std::to_string(i + 1);
                // Text is read with an error string: a NULL or unmapped
                // pointer must not end the whole script with a fault.
                const bool text = value_style(p.args[i].resolved.kind) == ValueStyle::Text;
                out += "    " + vars[i] + " = " + (text ? "user_string(" + arg + ", \"<unreadable>\")" : arg) + ";\n";
                values += ", " + vars[i];
            }
            const std::string format = labelled_format(p.args, p.args.size(), kConversions);
            out += "    argstr = " + (values.empty() ? "\"\"" : "sprintf(\"" + format + "\"" + values + ")") + "\n}\n";
        }
    }
    return out;
}

}  // namespace probekit::codegen
