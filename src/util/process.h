// Running helper programs (cpp, cc) without a shell, so that file names and
// flags are passed exactly as given.
#pragma once

#include <string>
#include <vector>

namespace probekit::util {

struct ProcessResult {
    bool started = false;   // false: the program could not be run at all
    int exit_status = -1;   // exit code, or 128+signal
    std::string out;        // captured standard output (when requested)
    std::string error;      // why it could not be started
};

// Runs argv[0] (looked up in PATH) with stdin from /dev/null and stderr
// inherited. Standard output is captured when `capture` is true.
ProcessResult run(const std::vector<std::string>& argv, bool capture);

// Splits a command from the environment ("ccache gcc -m64") on whitespace,
// as SystemTap's dtrace does with shlex for $CC and $CPP.
std::vector<std::string> split_command(const std::string& cmd);

}  // namespace probekit::util
