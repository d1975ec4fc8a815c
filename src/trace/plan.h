// What `probekit trace` attaches to: every site of every matching probe in
// the objects of a process (or of a command about to run), with the file
// offsets the kernel's uprobe wants and the arguments parsed once, named and
// typed from .note.probekit when the object has it.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "elf/argspec.h"
#include "elf/inventory.h"

namespace probekit::trace {

struct TraceArg {
    elf::ArgSpec spec;  // views into TracePlan::texts
    uint8_t kind = 0;   // .note.probekit kind (0: untyped, printed by the sdt sign)
    std::string name;   // from .note.probekit, else "argN"
};

struct TraceProbe {
    std::string provider, name;  // name as consumers show it (req-start)
};

struct TraceSite {
    size_t probe = 0;          // index into TracePlan::probes
    std::string object;        // as the process maps it (or the file given)
    std::string open_path;     // the same file, for the kernel
    uint64_t offset = 0;       // file offset of the site: the uprobe's offset
    uint64_t ref_ctr = 0;      // file offset of the semaphore, 0 when none
    std::vector<TraceArg> args;
    uint32_t stack_bytes = 0;  // user stack to sample per hit (0: none needed)
};

struct TracePlan {
    std::vector<TraceProbe> probes;
    std::vector<TraceSite> sites;
    std::deque<std::string> texts;  // argument strings the specs point into
};

// The probes of `objects` matching `globs`. `where` names the target in
// messages ("process 42", "/usr/bin/server"). Errors, each its own: no
// object has probes; nothing matches; an architecture other than x86-64.
std::optional<TracePlan> make_plan(const std::vector<elf::ObjectReport>& objects, const std::vector<std::string>& globs,
                                   const std::string& where, std::string& error);

}  // namespace probekit::trace
