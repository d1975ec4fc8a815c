// Unwinding captured stacks and symbolizing their frames, outside any signal
// handler, with libdw: CFI from .eh_frame/.debug_frame, symbols, and
// file:line from DWARF on request.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/threads/slot.h"

namespace probekit::threads {

struct Frame {
    uint64_t pc = 0;
    std::string function;  // demangled; "" when no symbol covers pc
    uint64_t offset = 0;   // pc - function start
    std::string object;    // path of the loaded object
    uint64_t object_offset = 0;  // pc - object load base
    std::string file;      // with file_line only, where DWARF has it
    int line = 0;
};

class Unwinder {
public:
    Unwinder();
    ~Unwinder();
    Unwinder(const Unwinder&) = delete;
    Unwinder& operator=(const Unwinder&) = delete;

    // Re-reads the loaded objects (/proc/self/maps). libdw keeps the objects
    // whose mapping did not change, with their symbol tables and CFI, so only
    // objects dlopened since the previous dump are read. Reading maps takes
    // no loader lock, unlike dl_iterate_phdr. False when libdw fails.
    bool refresh(std::string* error);

    // Unwinds a slot's captured registers and stack copy. note says why the
    // stack ends early (window exhausted, no CFI).
    std::vector<Frame> unwind(const Slot& slot, bool file_line, std::string* note);

    // The Dwfl callbacks' view of the slot being unwound.
    struct Impl;

private:
    std::unique_ptr<Impl> impl_;
};

}  // namespace probekit::threads
