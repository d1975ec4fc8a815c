// `probekit verify`: lint a binary's probes; exit 1 on any error, for builds.
#include <cstdio>
#include <memory>

#include "elf/inventory.h"
#include "elf/verify.h"
#include "spec/load.h"
#include "tools/probekit/commands.h"
#include "util/json_writer.h"
#include "util/out_buffer.h"

namespace probekit::cli {
namespace {

struct VerifyArgs {
    std::vector<std::string> binaries;
    std::string spec;
    bool cpp = false;
    std::string format = "text";
};

int run_verify(const VerifyArgs& a) {
    std::optional<spec::Spec> spec;
    if (!a.spec.empty()) {
        spec::Diagnostics diags;
        spec::LoadOptions opts;
        opts.use_cpp = a.cpp;
        spec = spec::load_file(a.spec, opts, diags);
        std::fputs(diags.format_all().c_str(), stderr);
        if (!spec) return 1;
    }
    size_t errors = 0, warnings = 0;
    util::OutBuffer out;  // all kept: it goes to stdout or stderr depending on the findings
    util::JsonWriter w(out);
    if (a.format == "json") w.begin_object().key("binaries").begin_array();
    for (const auto& bin : a.binaries) {
        std::string err;
        auto r = elf::inspect_file(bin, err);
        if (!r) {
            std::fprintf(stderr, "probekit verify: error: %s: %s\n", bin.c_str(), err.c_str());
            return 1;
        }
        auto findings = elf::verify(r->probes, spec ? &*spec : nullptr);
        if (a.format == "json") {
            w.begin_object().key("path").value(bin).key("probes").value(static_cast<uint64_t>(r->probes.probes.size()));
            w.key("findings").begin_array();
        }
        for (const auto& f : findings) {
            (f.severity == elf::Severity::Error ? errors : warnings)++;
            const char* sev = f.severity == elf::Severity::Error ? "error" : "warning";
            if (a.format == "json") {
                w.begin_object().key("severity").value(sev).key("rule").value(f.rule).key("probe").value(f.probe);
                w.key("message").value(f.message).end_object();
            } else {
                out += bin + ": " + sev + ": " + (f.probe.empty() ? "" : f.probe + ": ") + f.message + " [" + f.rule + "]\n";
            }
        }
        if (a.format == "json") w.end_array().end_object();
        else if (findings.empty())
            out += bin + ": ok, " + std::to_string(r->probes.probes.size()) + " probe" + (r->probes.probes.size() == 1 ? "" : "s") + "\n";
    }
    if (a.format == "json") {
        w.end_array().key("errors").value(static_cast<uint64_t>(errors)).key("warnings").value(static_cast<uint64_t>(warnings)).end_object();
        out += '\n';
    }
    std::fwrite(out.view().data(), 1, out.view().size(), errors && a.format != "json" ? stderr : stdout);
    return errors ? 1 : 0;
}

}  // namespace

Command add_verify(CLI::App& app) {
    auto args = std::make_shared<VerifyArgs>();
    auto* cmd = app.add_subcommand("verify", "Lint the probes of binaries (and check them against their spec)");
    cmd->add_option("binaries", args->binaries, "Executables, shared objects or object files")->required();
    cmd->add_option("--spec", args->spec, "The provider file: every probe it declares must be in the binary, and no other of its providers'");
    cmd->add_flag("-C,--cpp", args->cpp, "Run the C preprocessor on the spec first");
    cmd->add_option("--format", args->format, "Output: text or json")->check(CLI::IsMember({"text", "json"}))->default_str("text");
    cmd->footer(
        "Rules: operands that gdb, bpftrace, bcc or libbpf cannot read; sites of one probe with different\n"
        "signatures; semaphores outside a writable section or several for one probe; .note.probekit\n"
        "disagreeing with .note.stapsdt; with --spec, probes missing from or extra to the binary.\n"
        "Exit status: 1 when any error is found (warnings do not count), so it can run in a build.");
    return {cmd, [args] { return run_verify(*args); }};
}

}  // namespace probekit::cli
