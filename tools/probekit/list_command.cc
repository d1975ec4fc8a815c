// `probekit list`: the probes of binaries or of a running process.
#include <fnmatch.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <memory>
#include <string>

#include "elf/inventory.h"
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

std::string display(std::string_view name) {
    std::string s(name);
    for (size_t i = s.find("__"); i != std::string::npos; i = s.find("__", i + 1)) s.replace(i, 2, "-");
    return s;
}

// 'provider:name' globs; a pattern without ':' matches the probe name in any
// provider. Names match as written (req__start) or as consumers show them (req-start).
bool matches(const std::vector<std::string>& globs, const ProbeInfo& p) {
    if (globs.empty()) return true;
    const std::string prov(p.provider), name(p.name), shown = display(p.name);
    for (const auto& g : globs) {
        auto colon = g.find(':');
        std::string gp = colon == std::string::npos ? "*" : g.substr(0, colon);
        std::string gn = colon == std::string::npos ? g : g.substr(colon + 1);
        if (fnmatch(gp.c_str(), prov.c_str(), 0) == 0 &&
            (fnmatch(gn.c_str(), name.c_str(), 0) == 0 || fnmatch(gn.c_str(), shown.c_str(), 0) == 0))
            return true;
    }
    return false;
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

const char* path_name(elf::AttachPath a) {
    switch (a) {
        case elf::AttachPath::FastCall: return "fast";
        case elf::AttachPath::Int3: return "int3";
        default: return "unknown";
    }
}

void print_text(util::OutBuffer& out, const std::vector<ObjectReport>& objs, const ListArgs& a) {
    char buf[256];
    std::vector<elf::ArgSpec> args;  // reused across sites
    for (const auto& o : objs) {
        const auto arch = o.probes.object->arch();
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
                std::snprintf(buf, sizeof buf, "    0x%" PRIx64 " [%s]", s.pc + o.bias, path_name(elf::attach_path(o, s)));
                out += buf;
                elf::parse_args(s.args, arch, args);
                for (size_t k = 0; k < args.size(); ++k) {
                    out += ' ';
                    if (p.meta && k < p.meta->args.size() && !p.meta->args[k].name.empty()) {
                        out += p.meta->args[k].name;
                        out += '=';
                    }
                    out += args[k].text;
                    if (args[k].kind == elf::OperandKind::Invalid) {
                        out += "(unparsed: ";
                        out += args[k].error;
                        out += ')';
                    }
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

void print_json(util::OutBuffer& out, const std::vector<ObjectReport>& objs, const ListArgs& a, pid_t pid) {
    util::JsonWriter w(out);
    std::vector<elf::ArgSpec> args;  // reused across sites
    w.begin_object();
    if (pid) w.key("pid").value(static_cast<int64_t>(pid));
    w.key("objects").begin_array();
    for (const auto& o : objs) {
        if (!any_match(a.globs, o)) continue;
        const auto arch = o.probes.object->arch();
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
                    w.begin_object();
                    w.key("address").address(s.pc + o.bias);
                    w.key("attach").value(path_name(elf::attach_path(o, s)));
                    w.key("args").begin_array();
                    elf::parse_args(s.args, arch, args);
                    for (const auto& x : args) {
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
                    w.end_array();
                    w.end_object();
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
