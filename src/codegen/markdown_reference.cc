#include "codegen/markdown_reference.h"

#include <map>

#include "spec/names.h"

namespace probekit::codegen {
namespace {

// A doc comment split into its prose and its `@param NAME text` lines, which
// go to the argument table instead.
struct Doc {
    std::string prose;
    std::map<std::string, std::string> params;
};

Doc split_doc(const std::string& doc) {
    Doc d;
    std::string* last = nullptr;  // a @param's text may continue on the next lines
    size_t start = 0;
    while (start <= doc.size()) {
        size_t end = doc.find('\n', start);
        if (end == std::string::npos) end = doc.size();
        std::string line = doc.substr(start, end - start);
        start = end + 1;
        if (line.rfind("@param ", 0) == 0) {
            size_t name_end = line.find(' ', 7);
            std::string name = line.substr(7, name_end == std::string::npos ? std::string::npos : name_end - 7);
            last = &d.params[name];
            *last = name_end == std::string::npos ? "" : line.substr(name_end + 1);
            continue;
        }
        const size_t text = line.find_first_not_of(" \t");
        if (last && text != std::string::npos && line[text] != '@') {
            *last += " " + line.substr(text);
        } else {
            last = nullptr;
            d.prose += line + "\n";
        }
    }
    while (!d.prose.empty() && (d.prose.back() == '\n' || d.prose.back() == ' ')) d.prose.pop_back();
    return d;
}

// Table cells hold one line, and `|` would end the cell.
std::string cell(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '|') out += "\\|";
        else out += c == '\n' ? ' ' : c;
    }
    return out;
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

std::string kind_cell(const spec::Arg& a) {
    std::string k = spec::kind_name(a.resolved.kind);
    if (a.resolved.size) k += ", " + std::to_string(a.resolved.size) + " bytes";
    return k;
}

void probe_section(std::string& out, const spec::Provider& prov, const spec::Probe& p) {
    const Doc doc = split_doc(p.doc);
    out += "\n### `" + prov.name + ":" + p.name + "`\n\n";
    if (!doc.prose.empty()) out += doc.prose + "\n\n";
    out += "```c\nprobe " + signature(p) + ";\n```\n\n";
    std::string params;
    for (size_t i = 0; i < p.args.size(); ++i) params += (i ? ", " : "") + spec::arg_label(p.args[i].name, i);
    const std::string macro = spec::macro_name(prov.name, p.name);
    out += "- C/C++: `" + macro + "(" + params + ")`, `" + macro + "_GATED(...)`, `" + macro + "_ENABLED()`\n";
    out += "- stap: `" + spec::stap_alias_name(prov.name, p.name) + "` (generated tapset), `process(\"BIN\").provider(\"" +
           prov.name + "\").mark(\"" + p.name + "\")`\n";
    out += "- bpftrace: `usdt:BIN:" + prov.name + ":" + p.name + "`; gdb: `break -probe-stap " + prov.name + ":" + p.name + "`\n";
    if (p.args.empty()) return;
    out += "\n| # | argument | type | kind | description |\n| --- | --- | --- | --- | --- |\n";
    for (size_t i = 0; i < p.args.size(); ++i) {
        const auto& a = p.args[i];
        auto param = doc.params.find(a.name);
        out += "| " + std::to_string(i + 1) + " | `" + spec::arg_label(a.name, i) + "` | `" + cell(a.type.spelling()) +
               "` | " + kind_cell(a) + " | " + (a.name.empty() || param == doc.params.end() ? "" : cell(param->second)) + " |\n";
    }
}

}  // namespace

std::string markdown_reference(const spec::Spec& spec, const ScriptOptions& options) {
    std::string out = "# Probes of " + options.source_name + "\n\n<!-- " + generated_notice(options.source_name) + " -->\n";
    size_t count = 0;
    for (const auto& prov : spec.providers) count += prov.probes.size();
    out += "\n" + std::to_string(spec.providers.size()) + (spec.providers.size() == 1 ? " provider, " : " providers, ") +
           std::to_string(count) + (count == 1 ? " probe" : " probes") +
           ". Arguments count from 1 (`$arg1` in stap; `arg0` in bpftrace and `$_probe_arg0` in gdb are the first); "
           "an unnamed argument is shown as `argN`. `BIN` is the program or library that fires them.\n";
    for (const auto& prov : spec.providers) {
        out += "\n## Provider `" + prov.name + "`\n\n| probe | arguments | description |\n| --- | --- | --- |\n";
        for (const auto& p : prov.probes) {
            const std::string sig = signature(p);
            out += "| `" + p.name + "` | `" + cell(sig.substr(p.name.size())) + "` | " + cell(first_line(split_doc(p.doc).prose)) + " |\n";
        }
        for (const auto& p : prov.probes) probe_section(out, prov, p);
    }
    return out;
}

}  // namespace probekit::codegen
