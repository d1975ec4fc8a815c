// `probekit threads PID`: a thread dump of a live process that uses
// libprobekit's thread dumps (src/control/thread_dump_client.cc).
#include <cstdio>

#include "control/thread_dump_client.h"
#include "tools/probekit/commands.h"

namespace probekit::cli {

Command add_threads(CLI::App& app) {
    auto* cmd = app.add_subcommand("threads", "Print the stacks of every thread of a process that uses libprobekit");
    auto rq = std::make_shared<control::ThreadDumpRequest>();
    auto format = std::make_shared<std::string>("text");
    cmd->add_option("pid", rq->pid, "Process to dump")->required()->check(CLI::PositiveNumber);
    cmd->add_option("--format", *format, "Output format")->check(CLI::IsMember({"text", "json"}))->default_str("text");
    cmd->add_flag("--interrupt-all", rq->interrupt_all,
                  "Signal blocked threads too: stacks for all, but their sleeps may return EINTR (docs/threads.md)");
    cmd->add_flag("--lines", rq->file_line, "Add file:line to frames, from DWARF");
    cmd->add_option("--timeout", rq->timeout_ms, "Milliseconds to wait for the answer")->default_str("5000")
        ->check(CLI::Range(1, 600000));
    return {cmd, [rq, format] {
                rq->json = *format == "json";
                std::string error;
                const std::string text = control::request_thread_dump(*rq, &error);
                if (text.empty()) {
                    std::fprintf(stderr, "probekit threads: %s\n", error.c_str());
                    return 1;
                }
                std::fwrite(text.data(), 1, text.size(), stdout);
                return 0;
            }};
}

}  // namespace probekit::cli
