// `probekit list`: the probes of binaries or of a running process.
#include <unistd.h>

#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "elf/inventory.h"
#include "spec/probe_glob.h"
#include "tools/probekit/commands.h"
#include "util/json_writer.h"
#include "util/out_buffer.h"

namespace probekit::cli {
namespace {

using elf::ObjectReport;
using elf::ProbeInfo;

struct ListArgs {
    std::vector<std::string> targets;  // binaries, then an optional glob is among them
    int pid = 0;
    bool verbose = false;
    std::string format = "text";
    std::vector<std::string> globs;
};

bool matches(const std::vector<std::string>& globs, const ProbeInfo& p) {
    return spec::matches_probe_glob(globs, p.provider, p.name);
}

bool any_match(const std::vector<std::string>& globs, const ObjectReport& o) {
    for (const auto& p : o.probes.probes)
        if (matches(globs, p)) return true;
    return false;
}

std::string signature(const ProbeInfo& p, elf::Arch arch) {
    std::string s = std::string(p.name) + "(";
    if (p.meta) {
        for (size_t i = 0; i < p.meta->args.size(); ++i) {
            const auto& a = p.meta->args[i];
            std::string type = a.kind == 8 ? "string" : std::string(a.type);
            s += (i ? ", " : "") + type + (a.name.empty() ? "" : " " + std::string(a.name));
        }
    } else if (!p.sites.empty()) {
        auto n = elf::parse_args(p.sites[0].args, arch).size();
        for (size_t i = 0; i < n; ++i) s += (i ? ", " : "") + std::string("arg") + std::to_string(i);
    }
    return s + ")";
}

std::string_view path_name(elf::AttachPath a) {
    switch (a) {
        case elf::AttachPath::FastCall: return "fast";
        case elf::AttachPath::Int3: return "int3";
        default: return "unknown";
    }
}

// Rendered arguments by their text. A listing has few distinct argument
// specs (45 among the 51,000 arguments of a 20,000-site binary: registers
// and stack slots), so each is parsed and rendered once and copied after
// that. Keys are views into the object's argument text, which outlives the
// cache. Bounded: past kMaxBytes of renderings, or kMaxEntries specs (a
// binary of unusual specs), the rest are rendered every time.
class ArgCache {
public:
    // What `render(spec, buffer)` appends for `spec`; valid until the next call.
    template <class Render>
    std::string_view get(std::string_view spec, Render&& render) {
        const uint64_t h = hash(spec);
        size_t mask = slots_.size() - 1;
        size_t i = h & mask;
        for (; slots_[i].key.data(); i = (i + 1) & mask)
            if (slots_[i].hash == h && same(slots_[i].key, spec)) return {arena_.view().data() + slots_[i].off, slots_[i].len};
        const size_t before = arena_.size();
        if (used_ >= kMaxEntries || before >= kMaxBytes) {
            scratch_.clear();
            render(spec, scratch_);
            return scratch_.view();
        }
        render(spec, arena_);
        if (2 * (used_ + 1) > slots_.size()) {
            grow();
            mask = slots_.size() - 1;
            for (i = h & mask; slots_[i].key.data(); i = (i + 1) & mask) {
            }
        }
        slots_[i] = {spec, h, static_cast<uint32_t>(before), static_cast<uint32_t>(arena_.size() - before)};
        ++used_;
        return {arena_.view().data() + before, arena_.size() - before};
    }

private:
    static constexpr size_t kMaxEntries = 4096, kMaxBytes = 512 * 1024;
    struct Slot {
        std::string_view key;  // null data: a free slot
        uint64_t hash = 0;
        uint32_t off = 0, len = 0;
    };
    void grow() {
        std::vector<Slot> old(slots_.size() * 2);
        old.swap(slots_);
        const size_t mask = slots_.size() - 1;
        for (const Slot& e : old) {
            if (!e.key.data()) continue;
            size_t i = e.hash & mask;
            while (slots_[i].key.data()) i = (i + 1) & mask;
            slots_[i] = e;
        }
    }
    // Specs are a few bytes: a word or two at a time, inline, not through memcmp.
    static bool same(std::string_view a, std::string_view b) {
        const size_t n = a.size();
        if (n != b.size()) return false;
        const char* x = a.data();
        const char* y = b.data();
        if (n >= 8) {
            uint64_t u, v;
            for (size_t i = 0; i + 8 < n; i += 8) {
                std::memcpy(&u, x + i, 8);
                std::memcpy(&v, y + i, 8);
                if (u != v) return false;
            }
            std::memcpy(&u, x + n - 8, 8);
            std::memcpy(&v, y + n - 8, 8);
            return u == v;
        }
        if (n >= 4) {
            uint32_t u1, v1, u2, v2;
            std::memcpy(&u1, x, 4);
            std::memcpy(&v1, y, 4);
            std::memcpy(&u2, x + n - 4, 4);
            std::memcpy(&v2, y + n - 4, 4);
            return u1 == v1 && u2 == v2;
        }
        for (size_t i = 0; i < n; ++i)
            if (x[i] != y[i]) return false;
        return true;
    }
    // A few words per spec, not a step per byte.
    static uint64_t hash(std::string_view s) {
        constexpr uint64_t k = 0x9e3779b97f4a7c15ull;
        const char* p = s.data();
        const size_t n = s.size();
        uint64_t h = (n + 1) * k;
        if (n >= 8) {
            uint64_t v;
            for (size_t i = 0; i + 8 < n; i += 8) {
                std::memcpy(&v, p + i, 8);
                h = (h ^ v) * k;
                h ^= h >> 29;
            }
            std::memcpy(&v, p + n - 8, 8);
            h ^= v;
        } else if (n >= 4) {
            uint32_t lo, hi;
            std::memcpy(&lo, p, 4);
            std::memcpy(&hi, p + n - 4, 4);
            h ^= static_cast<uint64_t>(hi) << 32 | lo;
        } else {
            for (size_t i = 0; i < n; ++i) h ^= static_cast<uint64_t>(static_cast<uint8_t>(p[i])) << (8 * i);
        }
        // MurmurHash3's finalizer: a product carries differences only
        // upwards, and the table indexes with the low bits.
        h = (h ^ (h >> 33)) * 0xff51afd7ed558ccdull;
        h = (h ^ (h >> 33)) * 0xc4ceb9fe1a85ec53ull;
        return h ^ (h >> 33);
    }
    std::vector<Slot> slots_ = std::vector<Slot>(64);
    util::OutBuffer arena_{nullptr, 4096}, scratch_{nullptr, 256};
    size_t used_ = 0;
};

// "0x" and lowercase hex digits, as printf's %#x (but 0 is "0x0").
char* put_hex(char* p, uint64_t v) {
    *p++ = '0';
    *p++ = 'x';
    return std::to_chars(p, p + 16, v, 16).ptr;
}

void print_text(util::OutBuffer& out, const std::vector<ObjectReport>& objs, const ListArgs& a) {
    char buf[256];
    for (const auto& o : objs) {
        const auto arch = o.probes.object->arch();
        ArgCache cache;  // per object: the views are into its argument text
        for (size_t i = 0; i < o.probes.probes.size(); ++i) {
            const ProbeInfo& p = o.probes.probes[i];
            if (!matches(a.globs, p)) continue;
            uint64_t sem = p.sites.empty() ? 0 : p.sites[0].semaphore;
            out += p.provider;
            out += ':';
            out += signature(p, arch);
            std::snprintf(buf, sizeof buf, "  %zu site%s", p.sites.size(), p.sites.size() == 1 ? "" : "s");
            out += buf;
            if (sem) {
                std::snprintf(buf, sizeof buf, "  semaphore 0x%" PRIx64, sem + o.bias);
                out += buf;
            } else {
                out += "  no semaphore";
            }
            if (o.live && i < o.gates.size() && o.gates[i]) {
                std::snprintf(buf, sizeof buf, "  %s (external %u, in-process %u)",
                              o.gates[i]->external || o.gates[i]->inproc ? "ENABLED" : "disabled", o.gates[i]->external, o.gates[i]->inproc);
                out += buf;
            }
            out += "  ";
            out += o.path;
            out += '\n';
            if (!a.verbose) continue;
            if (p.meta && !p.meta->doc.empty()) {
                out += "    doc: ";
                out += p.meta->doc.substr(0, p.meta->doc.find('\n'));
                out += '\n';
            }
            for (const auto& s : p.sites) {
                char* b = out.reserve(48);
                std::memcpy(b, "    ", 4);
                b = put_hex(b + 4, s.pc + o.bias);
                *b++ = ' ';
                *b++ = '[';
                const std::string_view path = path_name(elf::attach_path(o, s));
                std::memcpy(b, path.data(), path.size());
                b += path.size();
                *b++ = ']';
                out.commit(b);
                const std::string_view site_args = s.args;
                size_t pos = 0, k = 0;
                std::string_view spec;
                for (; elf::next_arg(site_args, pos, spec); ++k) {
                    out += ' ';
                    if (p.meta && k < p.meta->args.size() && !p.meta->args[k].name.empty()) {
                        out += p.meta->args[k].name;
                        out += '=';
                    }
                    out += cache.get(spec, [arch](std::string_view text, util::OutBuffer& r) {
                        const elf::ArgSpec x = elf::parse_arg(text, arch);
                        r += x.text;
                        if (x.kind == elf::OperandKind::Invalid) {
                            r += "(unparsed: ";
                            r += x.error;
                            r += ')';
                        }
                    });
                }
                out += '\n';
            }
        }
    }
    for (const auto& o : objs)
        if (!o.gate_error.empty()) out += "note: gate values of " + o.path + " not shown: " + o.gate_error + "\n";
}

const char* operand_kind(elf::OperandKind k) {
    switch (k) {
        case elf::OperandKind::Register: return "register";
        case elf::OperandKind::Memory: return "memory";
        case elf::OperandKind::Constant: return "constant";
        default: return "invalid";
    }
}

// One decoded argument as a JSON object.
void write_json_arg(util::OutBuffer& out, const elf::ArgSpec& x) {
    util::JsonWriter w(out);
    w.begin_object();
    w.key("spec").value(x.text);
    w.key("size").value(x.size);
    w.key("signed").value(x.is_signed);
    w.key("operand").value(operand_kind(x.kind));
    if (x.kind == elf::OperandKind::Register) w.key("register").value(x.reg);
    if (x.kind == elf::OperandKind::Constant) w.key("value").value(x.constant);
    if (x.kind == elf::OperandKind::Memory) {
        if (!x.base.empty()) w.key("base").value(x.base);
        if (!x.index.empty()) w.key("index").value(x.index).key("scale").value(x.scale);
        w.key("offset").value(x.offset);
        if (!x.symbol.empty()) w.key("symbol").value(x.symbol);
        if (!x.segment.empty()) w.key("segment").value(x.segment);
    }
    if (x.kind == elf::OperandKind::Invalid) w.key("error").value(x.error);
    w.end_object();
}

void print_json(util::OutBuffer& out, const std::vector<ObjectReport>& objs, const ListArgs& a, pid_t pid) {
    util::JsonWriter w(out);
    w.begin_object();
    if (pid) w.key("pid").value(static_cast<int64_t>(pid));
    w.key("objects").begin_array();
    for (const auto& o : objs) {
        if (!any_match(a.globs, o)) continue;
        const auto arch = o.probes.object->arch();
        ArgCache cache;  // per object: the views are into its argument text
        w.begin_object();
        w.key("path").value(o.path);
        w.key("arch").value(elf::arch_name(arch));
        w.key("build_id").value(o.probes.object->build_id());
        if (o.live) w.key("load_bias").address(o.bias);
        w.key("probes").begin_array();
        for (size_t i = 0; i < o.probes.probes.size(); ++i) {
            const ProbeInfo& p = o.probes.probes[i];
            if (!matches(a.globs, p)) continue;
            uint64_t sem = p.sites.empty() ? 0 : p.sites[0].semaphore;
            w.begin_object();
            w.key("provider").value(p.provider);
            w.key("name").value(p.name);
            w.key("signature").value(signature(p, arch));
            w.key("typed").value(p.meta != nullptr);
            if (p.meta) w.key("doc").value(p.meta->doc);
            w.key("site_count").value(static_cast<uint64_t>(p.sites.size()));
            if (sem) w.key("semaphore").address(sem + o.bias);
            else w.key("semaphore").null();
            if (o.live && i < o.gates.size() && o.gates[i]) {
                w.key("gate").begin_object();
                w.key("external").value(static_cast<unsigned>(o.gates[i]->external));
                w.key("in_process").value(static_cast<unsigned>(o.gates[i]->inproc));
                w.key("enabled").value(o.gates[i]->external != 0 || o.gates[i]->inproc != 0);
                w.end_object();
            }
            if (p.meta) {
                w.key("args").begin_array();
                for (const auto& m : p.meta->args) {
                    w.begin_object();
                    w.key("name").value(m.name);
                    w.key("type").value(m.type);
                    w.key("kind").value(elf::meta_kind_name(m.kind));
                    w.end_object();
                }
                w.end_array();
            }
            if (a.verbose) {
                w.key("sites").begin_array();
                for (const auto& s : p.sites) {
                    util::OutBuffer& r = w.raw_value();
                    char* b = r.reserve(80);
                    static constexpr std::string_view open = "{\"address\":\"";
                    std::memcpy(b, open.data(), open.size());
                    b = put_hex(b + open.size(), s.pc + o.bias);
                    static constexpr std::string_view attach = "\",\"attach\":\"";
                    std::memcpy(b, attach.data(), attach.size());
                    b += attach.size();
                    const std::string_view path = path_name(elf::attach_path(o, s));
                    std::memcpy(b, path.data(), path.size());
                    b += path.size();
                    static constexpr std::string_view args = "\",\"args\":[";
                    std::memcpy(b, args.data(), args.size());
                    r.commit(b + args.size());
                    const std::string_view site_args = s.args;
                    size_t pos = 0;
                    std::string_view spec;
                    for (bool first = true; elf::next_arg(site_args, pos, spec); first = false) {
                        if (!first) r += ',';
                        r += cache.get(spec, [arch](std::string_view text, util::OutBuffer& out) {
                            write_json_arg(out, elf::parse_arg(text, arch));
                        });
                    }
                    r += "]}";
                }
                w.end_array();
            }
            w.end_object();
        }
        w.end_array();
        w.end_object();
    }
    w.end_array();
    w.end_object();
    out += '\n';
}

// `stap -L 'process("BIN").mark("*")'` lines.
void print_stap(util::OutBuffer& out, const std::vector<ObjectReport>& objs, const ListArgs& a) {
    for (const auto& o : objs)
        for (const auto& p : o.probes.probes) {
            if (!matches(a.globs, p)) continue;
            out += "process(\"";
            out += o.path;
            out += "\").mark(\"";
            out += p.name;
            out += "\")";
            size_t n = p.sites.empty() ? 0 : elf::parse_args(p.sites[0].args, o.probes.object->arch()).size();
            for (size_t i = 0; i < n; ++i) out += " $arg" + std::to_string(i + 1) + ":long";
            out += '\n';
        }
}

// gdb's `info probes` table.
void print_gdb(util::OutBuffer& out, const std::vector<ObjectReport>& objs, const ListArgs& a) {
    char buf[512];
    out += "Type Provider Name Where Semaphore Object\n";
    for (const auto& o : objs)
        for (const auto& p : o.probes.probes) {
            if (!matches(a.globs, p)) continue;
            for (const auto& s : p.sites) {
                std::snprintf(buf, sizeof buf, "stap %.*s %.*s 0x%016" PRIx64 " ", static_cast<int>(p.provider.size()), p.provider.data(),
                              static_cast<int>(p.name.size()), p.name.data(), s.pc + o.bias);
                out += buf;
                if (s.semaphore) {
                    std::snprintf(buf, sizeof buf, "0x%016" PRIx64 " ", s.semaphore + o.bias);
                    out += buf;
                } else {
                    out += "                   ";
                }
                out += o.path;
                out += '\n';
            }
        }
}

int run_list(ListArgs a) {
    std::vector<ObjectReport> objs;
    // Existing files (and anything with a '/') are binaries; the rest are
    // probe patterns ('app:req*', 'req-start').
    std::vector<std::string> files;
    for (const auto& t : a.targets) {
        bool binary = !a.pid && (access(t.c_str(), F_OK) == 0 || t.find('/') != std::string::npos) && t.find(':') == std::string::npos;
        (binary ? files : a.globs).push_back(t);
    }
    if (!a.pid && files.empty() && !a.globs.empty()) {
        std::fprintf(stderr, "probekit list: error: %s: No such file or directory\n", a.globs.front().c_str());
        return 1;
    }
    if (a.pid) {
        std::string err;
        auto r = elf::inspect_process(a.pid, err);
        if (!r) {
            std::fprintf(stderr, "probekit list: error: %s\n", err.c_str());
            return 1;
        }
        objs = std::move(*r);
    } else {
        if (files.empty()) {
            std::fprintf(stderr, "probekit list: error: name a binary, or a process with -p PID\n");
            return 2;
        }
        for (const auto& f : files) {
            std::string err;
            auto r = elf::inspect_file(f, err);
            if (!r) {
                std::fprintf(stderr, "probekit list: error: %s: %s\n", f.c_str(), err.c_str());
                return 1;
            }
            for (const auto& pr : r->probes.problems) std::fprintf(stderr, "probekit list: warning: %s: %s\n", f.c_str(), pr.c_str());
            objs.push_back(std::move(*r));
        }
    }
    util::OutBuffer out(stdout);
    if (a.format == "json") print_json(out, objs, a, a.pid);
    else if (a.format == "stap") print_stap(out, objs, a);
    else if (a.format == "gdb") print_gdb(out, objs, a);
    else print_text(out, objs, a);

    bool shown = false;
    for (const auto& o : objs) shown = shown || any_match(a.globs, o);
    if (!shown && a.format == "text") {
        std::fprintf(stderr, "%s\n", a.globs.empty() ? (a.pid ? "no probes in this process" : "no probes")
                                                     : "no probe matches the given pattern");
    }
    out.flush();
    return 0;
}

}  // namespace

Command add_list(CLI::App& app) {
    auto args = std::make_shared<ListArgs>();
    auto* cmd = app.add_subcommand("list", "List the probes of binaries or of a running process");
    cmd->add_option("targets", args->targets, "Binaries (executables, shared objects, object files), and 'provider:name' globs");
    cmd->add_option("-p,--pid", args->pid, "List the probes of every object mapped into this process, with their gate values");
    cmd->add_flag("-v,--verbose", args->verbose, "Every site: runtime address, attach path (fast: 5-byte NOP call; int3: trap) and decoded arguments");
    cmd->add_option("--format", args->format, "Output: text, json, stap (like stap -L), gdb (like info probes)")
        ->check(CLI::IsMember({"text", "json", "stap", "gdb"}))
        ->default_str("text");
    cmd->footer(
        "Patterns: 'provider:name' shell globs; a pattern without ':' matches probe names in any provider;\n"
        "names match as written (req__start) or as shown by consumers (req-start).\n"
        "Exit status: 0 (also when there are no probes), 1 on an unreadable file, a missing process or no permission.");
    return {cmd, [args] { return run_list(*args); }};
}

}  // namespace probekit::cli
