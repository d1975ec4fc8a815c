// A process with threads in known call chains, five calls deep, for the thread
// dump tests and bench/threads: running (spinning), sleeping in nanosleep,
// waiting on a condition variable, blocked in a pipe read.
#pragma once

#include <atomic>
#include <cstdint>

namespace workload {

struct Counts {
    // A few spinners only: on a loaded 2-core machine each one competes with
    // the dumping thread for a CPU.
    int running = 4, sleeping = 20, waiting = 20, reading = 20;
    bool register_threads = true;
};

// Starts the threads and returns once every one has registered and reached
// its innermost function.
void start(const Counts& counts);
// Stops and joins them.
void stop();

// nanosleep and read calls that returned EINTR so far (the application's view
// of being interrupted by a dump).
uint64_t eintr_count();

}  // namespace workload
