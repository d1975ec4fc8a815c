#include "spec/load.h"

#include <cstdlib>

#include "spec/lexer.h"
#include "spec/parser.h"
#include "spec/sema.h"
#include "util/file.h"
#include "util/process.h"

namespace probekit::spec {

std::optional<Spec> load_text(const std::string& text, const std::string& path, Diagnostics& diags) {
    ParseResult parsed;
    {  // the tokens are freed before checking: a lower peak for large specs
        auto tokens = tokenize(text, path, diags);
        if (diags.has_errors()) return std::nullopt;
        parsed = parse(tokens, path, diags);
        if (diags.has_errors()) return std::nullopt;
    }
    check(parsed.spec, parsed.aliases, diags);
    if (diags.has_errors()) return std::nullopt;
    return std::move(parsed.spec);
}

std::optional<Spec> load_file(const std::string& path, const LoadOptions& options, Diagnostics& diags) {
    if (!options.use_cpp) {
        std::string error;
        auto text = util::read_file(path, error);
        if (!text) {
            diags.error({path, 0, 0}, error.substr(error.find(": ") + 2));
            return std::nullopt;
        }
        return load_text(*text, path, diags);
    }
    // cpp reports its own errors on stderr; its linemarkers keep our
    // locations pointing into the original files.
    std::string cmd = options.cpp_command;
    if (cmd.empty()) {
        const char* env = std::getenv("CPP");
        cmd = env && *env ? env : "cpp";
    }
    auto argv = util::split_command(cmd);
    // cpp decides the language from the suffix; `.d` is a make dependency
    // file to it, so say C explicitly.
    argv.insert(argv.end(), {"-x", "c"});
    argv.insert(argv.end(), options.cpp_flags.begin(), options.cpp_flags.end());
    argv.push_back(path);
    auto r = util::run(argv, true);
    if (!r.started) {
        diags.error({path, 0, 0}, "cannot run the C preprocessor '" + cmd + "': " + r.error);
        return std::nullopt;
    }
    if (r.exit_status != 0) {
        diags.error({path, 0, 0}, "the C preprocessor '" + cmd + "' failed (exit status " + std::to_string(r.exit_status) + ")");
        return std::nullopt;
    }
    return load_text(r.out, path, diags);
}

}  // namespace probekit::spec
