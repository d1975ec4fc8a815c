#include "util/process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>

extern char** environ;

namespace probekit::util {

ProcessResult run(const std::vector<std::string>& argv, bool capture) {
    ProcessResult r;
    if (argv.empty()) {
        r.error = "empty command";
        return r;
    }
    int pipefd[2] = {-1, -1};
    if (capture && pipe2(pipefd, O_CLOEXEC) != 0) {
        r.error = std::strerror(errno);
        return r;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    if (capture) posix_spawn_file_actions_adddup2(&actions, pipefd[1], 1);

    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    pid_t pid = -1;
    int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (capture) close(pipefd[1]);
    if (rc != 0) {
        if (capture) close(pipefd[0]);
        r.error = std::strerror(rc);
        return r;
    }
    r.started = true;
    if (capture) {
        char buf[65536];
        for (;;) {
            ssize_t n = read(pipefd[0], buf, sizeof buf);
            if (n > 0) r.out.append(buf, static_cast<size_t>(n));
            else if (n == 0 || errno != EINTR) break;
        }
        close(pipefd[0]);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    r.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return r;
}

std::vector<std::string> split_command(const std::string& cmd) {
    std::istringstream in(cmd);
    std::vector<std::string> out;
    for (std::string w; in >> w;) out.push_back(w);
    return out;
}

}  // namespace probekit::util
