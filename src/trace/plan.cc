#include "trace/plan.h"

#include <algorithm>

#include "control/gates.h"
#include "spec/names.h"
#include "spec/probe_glob.h"

namespace probekit::trace {
namespace {

// How much of the user stack a hit samples (PERF_SAMPLE_STACK_USER) for an
// argument that lives in the probed function's frame. %rsp-relative
// operands say exactly how far up they reach. %rbp-relative ones (what -O0
// writes) sit at an unknown distance above %rsp, the function's frame size:
// 1 KiB covers the frames of ordinary functions at -O0; an operand beyond it
// decodes as unavailable rather than as a value read later from a frame
// that has gone. Sites whose arguments are all registers or constants
// sample no stack at all (the common -O1+ case: 168 bytes per hit).
constexpr uint32_t kFrameWindow = 1024;

uint32_t stack_need(const elf::ArgSpec& a) {
    if (a.kind != elf::OperandKind::Memory || !a.index.empty() || !a.symbol.empty() || !a.segment.empty()) return 0;
    if (a.base == "rsp" || a.base == "esp") {
        const int64_t end = a.offset + a.size;
        return end <= 0 ? 0 : static_cast<uint32_t>(std::min<int64_t>((end + 7) & ~int64_t{7}, 65000));
    }
    if (a.base == "rbp" || a.base == "ebp") return kFrameWindow;
    return 0;
}

}  // namespace

std::optional<TracePlan> make_plan(const std::vector<elf::ObjectReport>& objects, const std::vector<std::string>& globs,
                                   const std::string& where, std::string& error) {
    TracePlan plan;
    size_t total = 0;
    for (const auto& o : objects) {
        const elf::ElfObject& obj = *o.probes.object;
        total += o.probes.probes.size();
        const std::string open_path = control::same_file(o.path, obj.path()) ? o.path : obj.path();
        for (const auto& p : o.probes.probes) {
            if (!spec::matches_probe_glob(globs, p.provider, p.name)) continue;
            if (obj.arch() != elf::Arch::X86_64) {
                error = o.path + ": probekit trace decodes x86-64 objects only (this one is " +
                        elf::arch_name(obj.arch()) + ")";
                return std::nullopt;
            }
            const std::string provider(p.provider), name = spec::display_name(std::string(p.name));
            size_t probe = plan.probes.size();
            for (size_t i = 0; i < plan.probes.size(); ++i)
                if (plan.probes[i].provider == provider && plan.probes[i].name == name) probe = i;
            if (probe == plan.probes.size()) plan.probes.push_back({provider, name});
            for (const auto& s : p.sites) {
                auto off = obj.file_offset(s.pc);
                auto sem = s.semaphore ? obj.file_offset(s.semaphore) : std::optional<uint64_t>(0);
                if (!off || !sem) {
                    error = o.path + ": " + provider + ":" + name + " has a site outside the file's loaded segments";
                    return std::nullopt;
                }
                TraceSite site{probe, o.path, open_path, *off, *sem, {}, 0};
                const std::string& text = plan.texts.emplace_back(s.args.view());
                auto specs = elf::parse_args(text, obj.arch());
                for (size_t i = 0; i < specs.size(); ++i) {
                    TraceArg a;
                    a.spec = std::move(specs[i]);
                    if (p.meta && i < p.meta->args.size()) {
                        a.kind = p.meta->args[i].kind;
                        a.name = std::string(p.meta->args[i].name);
                    }
                    if (a.name.empty()) a.name = "arg" + std::to_string(i);
                    site.stack_bytes = std::max(site.stack_bytes, stack_need(a.spec));
                    site.args.push_back(std::move(a));
                }
                plan.sites.push_back(std::move(site));
            }
        }
    }
    if (total == 0) {
        error = where + " has no USDT probes (no .note.stapsdt in " +
                (objects.empty() ? std::string("any object") : "any of its objects") + ")";
        return std::nullopt;
    }
    if (plan.sites.empty()) {
        std::string what;
        for (const auto& g : globs) what += (what.empty() ? "'" : ", '") + g + "'";
        error = "no probe matches " + what + " in " + where + " (it has " + std::to_string(total) +
                " probes: see `probekit list`)";
        return std::nullopt;
    }
    return plan;
}

}  // namespace probekit::trace
