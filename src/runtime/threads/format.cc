// A dump as text (for people) and JSON (for scripts; `probekit threads
// --format json`).
#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "runtime/threads/dump.h"
#include "runtime/threads/slot.h"

namespace probekit::threads {
namespace {

std::string hex(uint64_t v) {
    char b[24];
    std::snprintf(b, sizeof b, "0x%" PRIx64, v);
    return b;
}

void append_number(std::string& out, uint64_t v, int base) {
    char b[24];
    const auto r = std::to_chars(b, b + sizeof b, v, base);
    out.append(b, r.ptr);
}

std::string blocked_call(const TaskInfo& t) {
    if (t.syscall < 0) return "";
    const char* name = syscall_name(t.syscall);
    return name ? name : "syscall " + std::to_string(t.syscall);
}

const char* mode_name(int mode) {
    return mode == PROBEKIT_THREADS_INTERRUPT_ALL ? "interrupt-all" : "running";
}

size_t captured_count(const Dump& d) {
    size_t n = 0;
    for (const auto& r : d.threads) n += r.capture == Capture::captured;
    return n;
}

}  // namespace

std::string format_text(const Dump& d) {
    std::string out;
    out.reserve(1024 + d.threads.size() * 1024);
    char line[256];
    std::snprintf(line, sizeof line, "probekit thread dump #%" PRIu64 " of pid %d: %zu threads, %zu stacks captured, mode %s, %.3f ms\n",
                  d.number, d.pid, d.threads.size(), captured_count(d), mode_name(d.options.mode),
                  static_cast<double>(d.elapsed_ns) / 1e6);
    out += line;
    if (!d.header.empty()) out += d.header + "\n";
    if (!d.error.empty()) out += "no stacks: " + d.error + "\n";
    int number = 0;
    for (const ThreadReport& r : d.threads) {
        std::snprintf(line, sizeof line, "Thread %d tid %d \"%s\" %c cpu %.3f s", ++number, r.task.tid, r.name.c_str(),
                      r.task.state, static_cast<double>(r.task.cpu_ns) / 1e9);
        out += line;
        if (r.requester) out += " [requester]";
        if (!r.registered) out += " [unregistered]";
        const std::string call = blocked_call(r.task);
        if (!call.empty() && r.task.state != 'R') {
            out += " blocked in " + call;
            if (!r.task.wchan.empty()) out += " (wchan " + r.task.wchan + ")";
        }
        if (r.capture != Capture::captured) out += std::string(": ") + capture_name(r.capture);
        out += "\n";
        if (!r.stuck.empty()) out += "    no progress: " + r.stuck + "\n";
        // Frames are most of the text (600 and more per dump): appended in
        // place, without a temporary string per piece.
        for (size_t i = 0; i < r.frames.size(); ++i) {
            const Frame& f = r.frames[i];
            out += "    #";
            append_number(out, i, 10);
            if (i < 10) out += ' ';  // "%-2zu"
            out += " 0x";
            append_number(out, f.pc, 16);
            out += ' ';
            if (!f.function.empty()) {
                out += f.function;
                out += "+0x";
                append_number(out, f.offset, 16);
            } else {
                out += "??";
            }
            if (!f.object.empty()) {
                out += " (";
                out += f.object;
                out += "+0x";
                append_number(out, f.object_offset, 16);
                out += ')';
            }
            if (!f.file.empty()) {
                out += " at ";
                out += f.file;
                out += ':';
                append_number(out, static_cast<uint64_t>(f.line), 10);
            }
            out += '\n';
        }
        if (!r.note.empty()) out += "    (" + r.note + ")\n";
        if (!r.app_state.empty()) out += "    state: " + r.app_state + "\n";
    }
    return out;
}

std::string format_json(const Dump& d) {
    nlohmann::json threads = nlohmann::json::array();
    int number = 0;
    for (const ThreadReport& r : d.threads) {
        nlohmann::json frames = nlohmann::json::array();
        for (const Frame& f : r.frames) {
            nlohmann::json jf = {{"pc", hex(f.pc)}, {"function", f.function}, {"offset", f.offset},
                                 {"object", f.object}, {"object_offset", f.object_offset}};
            if (!f.file.empty()) jf["file"] = f.file, jf["line"] = f.line;
            frames.push_back(std::move(jf));
        }
        nlohmann::json t = {{"number", ++number},
                            {"tid", r.task.tid},
                            {"name", r.name},
                            {"state", std::string(1, r.task.state)},
                            {"cpu_ns", r.task.cpu_ns},
                            {"registered", r.registered},
                            {"requester", r.requester},
                            {"capture", capture_name(r.capture)},
                            {"captured", r.capture == Capture::captured},
                            {"frames", std::move(frames)}};
        const std::string call = blocked_call(r.task);
        if (!call.empty() && r.task.state != 'R') t["syscall"] = call;
        if (!r.task.wchan.empty()) t["wchan"] = r.task.wchan;
        if (!r.stuck.empty()) t["stuck"] = r.stuck;
        if (!r.note.empty()) t["note"] = r.note;
        if (!r.app_state.empty()) t["app_state"] = r.app_state;
        // When its handler finished, from the start of the dump: the spread
        // of these is how far from one instant the snapshot is.
        if (r.answered_ns >= d.started_ns) t["answered_after_ns"] = r.answered_ns - d.started_ns;
        threads.push_back(std::move(t));
    }
    nlohmann::json j = {{"dump", d.number},   {"pid", d.pid},
                        {"mode", mode_name(d.options.mode)},
                        {"elapsed_ns", d.elapsed_ns}, {"threads", std::move(threads)}};
    if (!d.header.empty()) j["header"] = d.header;
    if (!d.error.empty()) j["error"] = d.error;
    return j.dump(2) + "\n";
}

}  // namespace probekit::threads
