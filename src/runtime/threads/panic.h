// The opt-in panic handler for fatal signals.
#pragma once

namespace probekit::threads {

// On the service thread: dumps every thread for the fatal handler that is
// waiting, faulting thread first, to the sink, then wakes it.
void serve_panic();

}  // namespace probekit::threads
