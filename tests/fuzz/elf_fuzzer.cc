// libFuzzer target for the ELF reader: whatever the bytes, reading the notes,
// decoding every argument, deciding attach paths and running the verify
// rules must neither crash nor read out of bounds (ASan checks the latter).
#include <cstddef>
#include <cstdint>
#include <string>

#include "elf/elf_object.h"
#include "elf/inventory.h"
#include "elf/probes.h"
#include "elf/verify.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string error;
    auto obj = probekit::elf::ElfObject::from_memory(reinterpret_cast<const char*>(data), size, "fuzz.elf", error);
    if (!obj) {
        if (error.empty()) __builtin_trap();  // a failure always says why
        return 0;
    }
    (void)obj->build_id();
    probekit::elf::ObjectReport report;
    report.path = "fuzz.elf";
    report.probes = probekit::elf::read_probes(std::move(obj));
    for (const auto& p : report.probes.probes) {
        if (p.sites.empty()) __builtin_trap();
        for (const auto& s : p.sites) {
            (void)probekit::elf::attach_path(report, s);
            for (const auto& a : probekit::elf::parse_args(s.args, report.probes.object->arch()))
                if (a.kind == probekit::elf::OperandKind::Invalid && a.error.empty()) __builtin_trap();
        }
        if (p.meta && p.meta->args.size() > 255) __builtin_trap();
    }
    (void)probekit::elf::verify(report.probes, nullptr);
    return 0;
}
