// `probekit compile`: a provider file in, a header, a manifest, a consumer
// script or a reference page out.
#include <algorithm>
#include <cstdio>
#include <memory>

#include "codegen/bpftrace_script.h"
#include "codegen/gdb_script.h"
#include "codegen/json_manifest.h"
#include "codegen/markdown_reference.h"
#include "codegen/marker_backend.h"
#include "codegen/native_header.h"
#include "codegen/stap_script.h"
#include "spec/load.h"
#include "tools/probekit/commands.h"
#include "util/file.h"

namespace probekit::cli {
namespace {

struct CompileArgs {
    std::string spec;
    std::string output;
    std::string format;                     // --format; empty: header
    std::vector<std::string> format_flags;  // --stap, --bpftrace, ...: spellings of --format X
    std::string binary;
    std::string provider;
    std::string marker = "native";
    bool cpp = false;
    std::vector<std::string> includes;
    std::vector<std::string> defines;
    bool werror = false;
};

std::string default_output(const std::string& spec, const std::string& suffix) {
    std::string base = spec.substr(spec.find_last_of('/') == std::string::npos ? 0 : spec.find_last_of('/') + 1);
    if (auto dot = base.rfind(".d"); dot != std::string::npos && dot + 2 == base.size()) base.resize(dot);
    return base + suffix;
}

// Every output; the script and page backends share one signature.
using ScriptWriter = std::string (*)(const spec::Spec&, const codegen::ScriptOptions&);
struct Format {
    const char* name;
    const char* suffix;      // of the default output file
    ScriptWriter script;     // null for the header and the manifest
    bool needs_binary;       // the script names the ELF file it attaches to
};
constexpr Format kFormats[] = {
    {"header", ".h", nullptr, false},
    {"json", ".json", nullptr, false},
    {"stap", ".stp", codegen::stap_tapset, true},
    {"bpftrace", ".bt", codegen::bpftrace_script, true},
    {"gdb", ".gdb", codegen::gdb_script, false},
    {"markdown", ".md", codegen::markdown_reference, false},
};

const Format* refuse(const std::string& message) {
    std::fprintf(stderr, "probekit compile: error: %s\n", message.c_str());
    return nullptr;
}

// Checks the flags that depend on each other; returns the format, or null
// after printing why the combination is refused (a usage error).
const Format* choose_format(const CompileArgs& a) {
    std::vector<std::string> asked = a.format_flags;
    if (!a.format.empty()) asked.push_back(a.format);
    std::sort(asked.begin(), asked.end());
    asked.erase(std::unique(asked.begin(), asked.end()), asked.end());
    if (asked.size() > 1) return refuse("choose one output format (got " + asked[0] + " and " + asked[1] + ")");
    const std::string name = asked.empty() ? "header" : asked[0];
    const Format* f = std::find_if(std::begin(kFormats), std::end(kFormats), [&](const Format& x) { return name == x.name; });
    if (f->needs_binary && a.binary.empty())
        return refuse("--format " + name + " needs --binary PATH: the executable or shared library whose probes it attaches to");
    if (!f->needs_binary && !a.binary.empty())
        return refuse("--binary applies to --format stap and bpftrace only, not " + name);
    // The path is written into string literals and attach points as is.
    if (std::any_of(a.binary.begin(), a.binary.end(), [](char c) { return c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20; }))
        return refuse("--binary: a path with '\"', '\\' or a control character cannot be written into a script");
    if (!f->script && !a.provider.empty())
        return refuse("--provider applies to --format stap, bpftrace, gdb and markdown only, not " + name);
    return f;
}

// --provider: the spec reduced to that provider, or an error naming the ones it has.
bool select_provider(spec::Spec& s, const std::string& name) {
    if (name.empty()) return true;
    auto it = std::find_if(s.providers.begin(), s.providers.end(), [&](const spec::Provider& p) { return p.name == name; });
    if (it == s.providers.end()) {
        std::string have;
        for (const auto& p : s.providers) have += (have.empty() ? "" : ", ") + p.name;
        std::fprintf(stderr, "probekit compile: error: %s declares no provider '%s' (it declares: %s)\n", s.path.c_str(),
                     name.c_str(), have.empty() ? "none" : have.c_str());
        return false;
    }
    spec::Provider keep = std::move(*it);
    s.providers.assign(1, std::move(keep));
    return true;
}

int run_compile(const CompileArgs& a) {
    const Format* format = choose_format(a);
    if (!format) return 2;
    spec::Diagnostics diags;
    diags.set_warnings_are_errors(a.werror);
    spec::LoadOptions opts;
    opts.use_cpp = a.cpp;
    for (const auto& i : a.includes) opts.cpp_flags.push_back("-I" + i);
    for (const auto& d : a.defines) opts.cpp_flags.push_back("-D" + d);
    auto spec = spec::load_file(a.spec, opts, diags);
    std::fputs(diags.format_all().c_str(), stderr);
    if (!spec || !select_provider(*spec, a.provider)) return 1;

    std::string out = a.output;
    if (out.empty()) out = default_output(a.spec, format->suffix);
    util::AtomicFile file;
    std::string error;
    if (!file.open(out, error)) {
        std::fprintf(stderr, "probekit compile: error: %s\n", error.c_str());
        return 1;
    }
    const std::string source_name = a.spec.substr(a.spec.find_last_of('/') == std::string::npos ? 0 : a.spec.find_last_of('/') + 1);
    if (format->script) {
        file.write(format->script(*spec, codegen::ScriptOptions{source_name, a.binary}));
    } else if (format->name == std::string("json")) {
        file.write(codegen::json_manifest(*spec));
    } else {
        codegen::HeaderOptions ho;
        ho.guard = codegen::guard_from_path(out == "-" ? default_output(a.spec, ".h") : out);
        ho.source_name = source_name;
        auto sink = [&file](std::string_view chunk) { file.write(chunk); };
        if (a.marker == "sys-sdt") codegen::write_native_header(*spec, codegen::SysSdtMarker{}, ho, sink);
        else codegen::write_native_header(*spec, codegen::NativeMarker{}, ho, sink);
    }
    if (!file.commit(error)) {
        std::fprintf(stderr, "probekit compile: error: %s\n", error.c_str());
        return 1;
    }
    return 0;
}

}  // namespace

Command add_compile(CLI::App& app) {
    auto args = std::make_shared<CompileArgs>();
    auto* cmd = app.add_subcommand("compile",
                                   "Compile a provider file (probes.d) into a C/C++ header, a JSON manifest, a stap tapset, "
                                   "a bpftrace or gdb script, or a Markdown reference");
    cmd->add_option("spec", args->spec, "Provider file, DTrace syntax")->required();
    cmd->add_option("-o,--output", args->output,
                    "Output file ('-' for standard output); default: the spec's name with .h, .json, .stp, .bt, "
                    ".gdb or .md");
    cmd->add_option("--format", args->format, "What to generate")
        ->check(CLI::IsMember({"header", "json", "stap", "bpftrace", "gdb", "markdown"}))
        ->default_str("header");
    for (const char* name : {"stap", "bpftrace", "gdb", "markdown"})
        cmd->add_flag_callback(std::string("--") + name, [args, name] { args->format_flags.push_back(name); },
                               std::string("Same as --format ") + name);
    cmd->add_option("--binary", args->binary,
                    "The executable or shared library that fires the probes, as stap and bpftrace should open it "
                    "(required for --format stap and bpftrace)");
    cmd->add_option("--provider", args->provider, "Only this provider's probes (stap, bpftrace, gdb, markdown)");
    cmd->add_option("--marker", args->marker,
                    "Site implementation: 'native' (probekit's marker: compact, 5-byte NOPs where safe, "
                    ".note.probekit) or 'sys-sdt' (<sys/sdt.h>, for comparison)")
        ->check(CLI::IsMember({"native", "sys-sdt"}))
        ->default_str("native");
    cmd->add_flag("-C,--cpp", args->cpp, "Run the C preprocessor ($CPP, default cpp) on the spec first");
    cmd->add_option("-I", args->includes, "Include directory for -C")->allow_extra_args(false);
    cmd->add_option("-D", args->defines, "Macro definition NAME[=VALUE] for -C")->allow_extra_args(false);
    cmd->add_flag("--Werror", args->werror, "Treat warnings (unknown types, ...) as errors");
    cmd->footer(
        "Exit status: 0 on success, 1 when the spec has errors (reported as file:line:col)\n"
        "or the output cannot be written; nothing is written on failure.");
    return {cmd, [args] { return run_compile(*args); }};
}

}  // namespace probekit::cli
