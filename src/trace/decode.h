// An argument's value at a hit, from the registers and the slice of user
// stack the kernel sampled (PERF_SAMPLE_REGS_USER / STACK_USER), and its
// text. x86-64.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "elf/argspec.h"
#include "util/out_buffer.h"

namespace probekit::trace {

// The user registers sampled, as the kernel lays them out for kRegsMask.
// Everything the argument specs can name: the 16 general registers and
// %rip. (The segment registers are not sampleable on x86-64; %fs-relative
// operands are not decoded.)
inline constexpr uint64_t kRegsMask = 0x1ffull | (0xffull << 16);  // AX..IP, R8..R15
inline constexpr size_t kRegsCount = 17;

struct HitContext {
    pid_t pid = 0;
    std::span<const uint64_t> regs;         // kRegsCount values, or empty
    std::span<const unsigned char> stack;   // user stack from %rsp up
    // The tracefs event's record (PERF_SAMPLE_RAW) and, per argument, the
    // offset of the string the kernel copied at the hit (-1: none, read
    // from the process instead). Empty with the uprobe PMU.
    std::span<const unsigned char> raw;
    std::span<const int32_t> string_field;
};

// The argument's value, truncated to its size and sign- or zero-extended as
// its spec says. nullopt with `why` when it cannot be known: a register
// that was not sampled, a frame slot beyond the sampled stack. Memory that
// is not in the probed frame (globals, heap through a register) is read
// from the live process with process_vm_readv: it is the value at decode
// time, a little after the hit, not at the hit itself.
std::optional<uint64_t> arg_value(const elf::ArgSpec& a, const HitContext& hit, const char*& why);

// Up to `max` bytes of the NUL-terminated string at `addr` in `pid`
// (process_vm_readv, page by page so that the read stops at the first
// unmapped page). `truncated` is set when no NUL was found within `max`.
// False when nothing at all could be read.
bool read_string(pid_t pid, uint64_t addr, size_t max, std::string& out, bool& truncated);

// How a value prints: by the .note.probekit kind, else by the sdt sign.
enum class Quote { Text, Json };
struct FormatOptions {
    size_t string_max = 256;
    Quote quote = Quote::Text;
};
// `arg` is the argument's index, for the strings the kernel copied.
void format_value(util::OutBuffer& out, uint8_t kind, const elf::ArgSpec& a, uint64_t v, const HitContext& hit,
                  size_t arg, const FormatOptions& opt);

}  // namespace probekit::trace
