#include "trace/output.h"

#include <charconv>
#include <algorithm>
#include <cinttypes>
#include <string>

#include "util/json_writer.h"

namespace probekit::trace {
namespace {

// seconds.nanoseconds, as perf script and bpftrace's nsecs show them.
void append_time(util::OutBuffer& out, uint64_t ns) {
    char b[40];
    out.append(b, static_cast<size_t>(std::snprintf(b, sizeof b, "%" PRIu64 ".%09" PRIu64, ns / 1000000000, ns % 1000000000)));
}

void append_u64(util::OutBuffer& out, uint64_t v) {
    char* p = out.reserve(24);
    out.commit(std::to_chars(p, p + 24, v).ptr);
}

std::string seconds_text(double s) {
    char b[32];
    std::snprintf(b, sizeof b, "%.3f", s);
    return b;
}

}  // namespace

Printer::Printer(std::FILE* out, Format f, const TracePlan& plan, size_t string_max)
    : out_(out), format_(f), plan_(plan) {
    fmt_.string_max = string_max;
    fmt_.quote = f == Format::Json ? Quote::Json : Quote::Text;
}

void Printer::hit(const Hit& h) {
    ++totals_.hits;
    const TraceSite& site = *h.site;
    const TraceProbe& probe = plan_.probes[site.probe];
    const bool json = format_ == Format::Json;
    if (json) {
        out_.append("{\"type\":\"hit\",\"time\":");
        append_time(out_, h.time_ns);
        out_.append(",\"pid\":");
        append_u64(out_, h.pid);
        out_.append(",\"tid\":");
        append_u64(out_, h.tid);
        out_.append(",\"provider\":\"");
        out_.append(probe.provider);  // identifiers: nothing to escape
        out_.append("\",\"probe\":\"");
        out_.append(probe.name);
        out_.append("\",\"args\":{");
    } else {
        append_time(out_, h.time_ns);
        out_.put(' ');
        append_u64(out_, h.tid);
        out_.put(' ');
        out_.append(probe.provider);
        out_.put(':');
        out_.append(probe.name);
    }
    for (size_t i = 0; i < site.args.size(); ++i) {
        const TraceArg& a = site.args[i];
        if (json) {
            if (i) out_.put(',');
            out_.put('"');
            out_.append(a.name);
            out_.append("\":");
        } else {
            out_.put(' ');
            out_.append(a.name);
            out_.put('=');
        }
        const char* why = "";
        auto v = arg_value(a.spec, h.ctx, why);
        if (!v) {
            out_.append(json ? "null" : "?");
            if (!json) {
                out_.put('(');
                out_.append(why);
                out_.put(')');
            }
            continue;
        }
        format_value(out_, a.kind, a.spec, *v, h.ctx, i, fmt_);
    }
    out_.append(json ? "}}\n" : "\n");
    end_line();
}

void Printer::end_line() {
    // Written in whole lines of at most about PIPE_BUF bytes: a pipe takes
    // such a write atomically, so the output of a -c command that shares
    // our stdout never lands inside one of our lines.
    if (out_.size() >= kFlushAt) out_.flush();
}

void Printer::lost(uint64_t n) {
    totals_.lost += n;
    char b[160];
    const int len = format_ == Format::Json
                        ? std::snprintf(b, sizeof b, "{\"type\":\"lost\",\"count\":%" PRIu64 "}\n", n)
                        : std::snprintf(b, sizeof b, "LOST %" PRIu64 " events (ring buffer full; try --buffer-pages)\n", n);
    out_.append(b, static_cast<size_t>(len));
    end_line();
}

void Printer::summary(const Summary& s, std::FILE* err) {
    if (format_ == Format::Json) {
        util::JsonWriter j(out_);
        j.begin_object().key("type").value("summary").key("hits").value(static_cast<int64_t>(s.hits))
            .key("lost").value(static_cast<int64_t>(s.lost)).key("seconds").raw_value(seconds_text(s.seconds)).key("ended").value(s.ended);
        if (s.command_status >= 0) j.key("command_status").value(static_cast<int64_t>(s.command_status));
        j.end_object();
        out_.put('\n');
        flush();
        return;
    }
    flush();
    std::fprintf(err, "probekit trace: %" PRIu64 " hits, %" PRIu64 " lost, %.3f s; ended: %s", s.hits, s.lost, s.seconds,
                 s.ended.c_str());
    if (s.command_status >= 0) std::fprintf(err, " (exit status %d)", s.command_status);
    std::fputc('\n', err);
}

void Printer::counts(const std::vector<uint64_t>& per_probe, const Summary& s) {
    if (format_ == Format::Json) {
        util::JsonWriter j(out_);
        j.begin_object().key("type").value("count").key("probes").begin_array();
        for (size_t i = 0; i < plan_.probes.size(); ++i)
            j.begin_object().key("provider").value(plan_.probes[i].provider).key("probe").value(plan_.probes[i].name)
                .key("hits").value(static_cast<int64_t>(per_probe[i])).end_object();
        j.end_array().key("lost").value(static_cast<int64_t>(s.lost)).key("seconds").raw_value(seconds_text(s.seconds))
            .key("ended").value(s.ended);
        if (s.command_status >= 0) j.key("command_status").value(static_cast<int64_t>(s.command_status));
        j.end_object();
        out_.put('\n');
        flush();
        return;
    }
    size_t width = 5;
    for (const auto& p : plan_.probes) width = std::max(width, p.provider.size() + 1 + p.name.size());
    char b[512];
    out_.append(b, static_cast<size_t>(std::snprintf(b, sizeof b, "%-*s %12s\n", static_cast<int>(width), "PROBE", "HITS")));
    for (size_t i = 0; i < plan_.probes.size(); ++i) {
        const std::string name = plan_.probes[i].provider + ":" + plan_.probes[i].name;
        out_.append(b, static_cast<size_t>(std::snprintf(b, sizeof b, "%-*s %12" PRIu64 "\n", static_cast<int>(width),
                                                         name.c_str(), per_probe[i])));
    }
    out_.append(b, static_cast<size_t>(std::snprintf(b, sizeof b, "lost %" PRIu64 ", %.3f s, ended: %s", s.lost, s.seconds,
                                                     s.ended.c_str())));
    if (s.command_status >= 0)
        out_.append(b, static_cast<size_t>(std::snprintf(b, sizeof b, " (exit status %d)", s.command_status)));
    out_.put('\n');
    flush();
}

void Printer::flush() { out_.flush(); }

}  // namespace probekit::trace
