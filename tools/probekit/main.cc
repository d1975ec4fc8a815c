// probekit: one binary, one subcommand per operator or build task.
// Flags are parsed here; the work lives in src/.
#include <CLI/CLI.hpp>

#include "tools/probekit/commands.h"

int main(int argc, char** argv) {
    CLI::App app{"probekit: USDT probes that cost one NOP when nobody listens"};
    app.require_subcommand(1);
    app.set_version_flag("--version", PROBEKIT_VERSION);
    const probekit::cli::Command commands[] = {
        probekit::cli::add_compile(app),
        probekit::cli::add_list(app),
        probekit::cli::add_verify(app),
        probekit::cli::add_enable(app),
        probekit::cli::add_disable(app),
        probekit::cli::add_trace(app),
        probekit::cli::add_threads(app),
    };
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        // --help and --version exit 0; any usage error exits 2, as the
        // documentation promises (CLI11's own codes are 100 and up).
        return app.exit(e) == 0 ? 0 : 2;
    }
    for (const auto& c : commands)
        if (c.app->parsed()) return c.run();
    return 2;
}
