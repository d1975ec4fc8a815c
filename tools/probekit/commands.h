#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace probekit::cli {

// A subcommand: its CLI11 node and what runs when it was selected (returns
// the process exit status).
struct Command {
    CLI::App* app;
    std::function<int()> run;
};

Command add_compile(CLI::App& app);
Command add_list(CLI::App& app);
Command add_verify(CLI::App& app);
Command add_enable(CLI::App& app);
Command add_disable(CLI::App& app);
Command add_trace(CLI::App& app);
Command add_threads(CLI::App& app);

}  // namespace probekit::cli
