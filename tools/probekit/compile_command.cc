// `probekit compile`: a provider file in, a header (or manifest) out.
#include <cstdio>
#include <memory>

#include "codegen/json_manifest.h"
#include "codegen/marker_backend.h"
#include "codegen/native_header.h"
#include "spec/load.h"
#include "tools/probekit/commands.h"
#include "util/file.h"

namespace probekit::cli {
namespace {

struct CompileArgs {
    std::string spec;
    std::string output;
    std::string format = "header";
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

int run_compile(const CompileArgs& a) {
    spec::Diagnostics diags;
    diags.set_warnings_are_errors(a.werror);
    spec::LoadOptions opts;
    opts.use_cpp = a.cpp;
    for (const auto& i : a.includes) opts.cpp_flags.push_back("-I" + i);
    for (const auto& d : a.defines) opts.cpp_flags.push_back("-D" + d);
    auto spec = spec::load_file(a.spec, opts, diags);
    std::fputs(diags.format_all().c_str(), stderr);
    if (!spec) return 1;

    std::string out = a.output;
    if (out.empty()) out = default_output(a.spec, a.format == "json" ? ".json" : ".h");
    util::AtomicFile file;
    std::string error;
    if (!file.open(out, error)) {
        std::fprintf(stderr, "probekit compile: error: %s\n", error.c_str());
        return 1;
    }
    if (a.format == "json") {
        file.write(codegen::json_manifest(*spec));
    } else {
        codegen::HeaderOptions ho;
        ho.guard = codegen::guard_from_path(out == "-" ? default_output(a.spec, ".h") : out);
        ho.source_name = a.spec.substr(a.spec.find_last_of('/') == std::string::npos ? 0 : a.spec.find_last_of('/') + 1);
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
    auto* cmd = app.add_subcommand("compile", "Compile a provider file (probes.d) into a C/C++ header or a JSON manifest");
    cmd->add_option("spec", args->spec, "Provider file, DTrace syntax")->required();
    cmd->add_option("-o,--output", args->output,
                    "Output file ('-' for standard output); default: the spec's name with .h (or .json)");
    cmd->add_option("--format", args->format, "What to generate")
        ->check(CLI::IsMember({"header", "json"}))
        ->default_str("header");
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
