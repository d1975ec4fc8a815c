// A cheap fingerprint of the process's executable file mappings, so that a
// dump re-reads /proc/self/maps (300-600 µs for a few hundred mappings here,
// most of it the kernel rendering the text) only when an object was loaded or
// unloaded since the previous dump.
#pragma once

#include <cstdint>

namespace probekit::threads {

// Hashes start, end, file offset, device and inode of every executable file
// mapping (PROCMAP_QUERY, Linux 6.11+: one ioctl per mapping, the kernel
// skips the anonymous ones). False when the kernel has no PROCMAP_QUERY or
// the query failed: the caller must then read the maps in full. No lock of
// the loader (dl_iterate_phdr would take it, and a thread stopped or
// deadlocked inside dlopen would then block the dump).
bool exec_mappings_fingerprint(uint64_t* fingerprint);

}  // namespace probekit::threads
