// probekit-dtrace: a drop-in for SystemTap's `dtrace` script, for builds such
// as PostgreSQL's and CPython's that run `$(DTRACE) -C -h -s probes.d -o x.h`.
//
// The command line is parsed by hand, not with CLI11, because it must accept
// exactly what SystemTap's script accepts: attached values (`-I/dir`, `-DX=1`),
// single-dash multi-letter flags (`-fPIC`, `-64`) and `-x ARG`, all in any order.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "codegen/dtrace_compat.h"
#include "spec/load.h"
#include "util/file.h"
#include "util/process.h"

namespace {

const char* const kUsage = "Usage: probekit-dtrace [--help] [-h | -G] [-C [-I<Path>] [-D<Name>[=<Value>]]] -s File.d [-o <File>]\n";

void help() {
    std::fputs(kUsage, stdout);
    std::fputs(
        "A drop-in for SystemTap's dtrace: the same options, headers and semaphore objects.\n"
        "  -h           build a header (default output: the .d file's base name + .h)\n"
        "  -G           build an object holding the probes' semaphores (default: base name + .o),\n"
        "               compiled with $CC (default gcc) and $CFLAGS\n"
        "  -C           run the C preprocessor ($CPP, default cpp) on the .d file first\n"
        "  -I<dir>      include directory, passed to cpp (and to $CC with -G)\n"
        "  -D<macro>    macro definition, passed to cpp (and to $CC with -G)\n"
        "  -s <file>    the provider file\n"
        "  -o <file>    the output file\n"
        "  -k           keep temporary files and print their names\n"
        "  --types      accepted and ignored (obsolete in SystemTap too)\n"
        "  -x <arg>, -64, -32, -fpic, -fPIC   accepted and ignored, as SystemTap does\n"
        "Exit status: 0 on success, 1 on bad usage, a spec error or a failed compiler run;\n"
        "no output file is left behind on failure.\n",
        stdout);
}

int usage_error(const std::string& msg) {
    std::fprintf(stderr, "probekit-dtrace: %s\n%s", msg.c_str(), kUsage);
    return 1;
}

std::string base_name(const std::string& path) {
    std::string base = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
    if (auto dot = base.rfind('.'); dot != std::string::npos && dot > 0) base.resize(dot);
    return base;
}

// -G: SystemTap compiles a generated C file with $CC; so do we, writing the
// object under a temporary name and renaming it into place on success.
int build_object(const std::string& source, const std::string& out, const std::vector<std::string>& defines,
                 const std::vector<std::string>& includes, bool keep) {
    const char* tmpdir = std::getenv("TMPDIR");
    std::string c_path = std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/probekit-dtrace-XXXXXX.c";
    int fd = mkstemps(c_path.data(), 2);
    if (fd < 0) return usage_error("cannot create a temporary file: " + c_path);
    close(fd);
    std::string error;
    if (!probekit::util::write_file_atomic(c_path, source, error)) {
        unlink(c_path.c_str());
        std::fprintf(stderr, "probekit-dtrace: error: %s\n", error.c_str());
        return 1;
    }
    const char* cc_env = std::getenv("CC");
    const char* cflags_env = std::getenv("CFLAGS");
    auto argv = probekit::util::split_command(cc_env && *cc_env ? cc_env : "gcc");
    argv.insert(argv.end(), defines.begin(), defines.end());
    argv.insert(argv.end(), includes.begin(), includes.end());
    argv.push_back("-g");
    for (auto& f : probekit::util::split_command(cflags_env ? cflags_env : "")) argv.push_back(f);
    std::string tmp_out = out + ".tmp" + std::to_string(getpid()) + ".o";
    argv.insert(argv.end(), {"-fPIC", "-I.", "-c", c_path, "-o", tmp_out});
    auto r = probekit::util::run(argv, false);
    if (keep) std::printf("source: %s\n", c_path.c_str());
    else unlink(c_path.c_str());
    if (!r.started || r.exit_status != 0) {
        unlink(tmp_out.c_str());
        std::fprintf(stderr, "probekit-dtrace: error: compiling the semaphores with '%s' %s\n", argv[0].c_str(),
                     r.started ? ("failed (exit status " + std::to_string(r.exit_status) + ")").c_str()
                               : ("could not start: " + r.error).c_str());
        return 1;
    }
    if (rename(tmp_out.c_str(), out.c_str()) != 0) {
        unlink(tmp_out.c_str());
        std::fprintf(stderr, "probekit-dtrace: error: cannot write %s\n", out.c_str());
        return 1;
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    bool header = false, object = false, cpp = false, keep = false;
    std::string spec_path, out;
    std::vector<std::string> includes, defines;
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty()) return usage_error("no arguments");
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a == "-o" || a == "-s" || a == "-x") {
            if (i + 1 >= args.size()) return usage_error("option " + a + " needs a value");
            const std::string& v = args[++i];
            if (a == "-o") out = v;
            else if (a == "-s") spec_path = v;
        } else if (a == "-h") header = true;
        else if (a == "-G") object = true;
        else if (a == "-C") cpp = true;
        else if (a == "-k") keep = true;
        else if (a.rfind("-D", 0) == 0) defines.push_back(a);
        else if (a.rfind("-I", 0) == 0) includes.push_back(a);
        else if (a == "--types") std::printf("%s: note: obsolete option --types used\n", argv[0]);
        else if (a == "-64" || a == "-32" || a == "-fpic" || a == "-fPIC" || a == "--no-pyparsing") {
        } else if (a == "--help") {
            help();
            return 0;
        } else if (!a.empty() && a[0] == '-') return usage_error("invalid option " + a);
        else return usage_error("unexpected argument '" + a + "' (the provider file is given with -s)");
    }
    if (header == object) return usage_error(header ? "-h and -G cannot be combined" : "one of -h or -G is required");
    if (spec_path.empty()) return usage_error("no provider file: give it with -s FILE.d");
    if (out.empty()) out = base_name(spec_path) + (header ? ".h" : ".o");

    probekit::spec::Diagnostics diags;
    probekit::spec::LoadOptions opts;
    opts.use_cpp = cpp;
    opts.cpp_flags = includes;
    opts.cpp_flags.insert(opts.cpp_flags.end(), defines.begin(), defines.end());
    auto spec = probekit::spec::load_file(spec_path, opts, diags);
    std::fputs(diags.format_all().c_str(), stderr);
    if (!spec) return 1;

    if (object) return build_object(probekit::codegen::dtrace_semaphore_source(*spec), out, defines, includes, keep);
    std::string error;
    if (!probekit::util::write_file_atomic(out, probekit::codegen::dtrace_header(*spec), error)) {
        std::fprintf(stderr, "probekit-dtrace: error: %s\n", error.c_str());
        return 1;
    }
    return 0;
}
