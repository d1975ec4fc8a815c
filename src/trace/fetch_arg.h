// An SDT argument as a tracefs uprobe fetch argument (the kernel's
// `+0(%di):string` syntax, Documentation/trace/uprobetracer.rst), so that
// the kernel copies a string argument at the hit, before the program can
// free or reuse it. x86-64.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "elf/argspec.h"

namespace probekit::trace {

// The kernel's name (pt_regs, any width mapped to the full register) of an
// x86-64 register as the SDT spec writes it ("edx" -> "dx", "r9d" -> "r9"),
// or empty when it has none (%ah, %xmm0, segment registers).
std::string_view kernel_register(std::string_view sdt_register);

// The fetch argument that reads the NUL-terminated string the argument
// points to: "+0(%di):string" for `8@%rdi`, "+0(+16(%sp)):string" for
// `8@16(%rsp)`. nullopt when fetch arguments cannot express the operand
// (an index register, a symbol or segment, a constant); such a string is
// read from the process when the hit is printed instead.
std::optional<std::string> string_fetch_arg(const elf::ArgSpec& a);

}  // namespace probekit::trace
