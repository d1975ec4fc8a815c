// What `probekit trace` prints: one line per hit (text or JSON lines),
// lost-event records where they happen, and a summary or a count table at
// the end.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "trace/decode.h"
#include "trace/plan.h"
#include "trace/session.h"
#include "util/out_buffer.h"

namespace probekit::trace {

enum class Format { Text, Json };

struct Summary {
    uint64_t hits = 0, lost = 0;
    double seconds = 0;
    std::string ended;          // "signal", "duration", "process exited", "command exited"
    int command_status = -1;    // -c: the command's exit status (128+N for signal N), else -1
};

class Printer {
public:
    Printer(std::FILE* out, Format f, const TracePlan& plan, size_t string_max);
    void hit(const Hit& h);
    void lost(uint64_t n);
    // Text: one line to `err` (stderr), so that stdout stays hit lines.
    // JSON: a final {"type":"summary"} line on stdout.
    void summary(const Summary& s, std::FILE* err);
    // --count: the table (text) or one {"type":"count"} object (JSON).
    void counts(const std::vector<uint64_t>& per_probe, const Summary& s);
    void flush();
    const Summary& totals() const { return totals_; }

private:
    static constexpr size_t kFlushAt = 3072;
    void end_line();
    util::OutBuffer out_;
    Format format_;
    const TracePlan& plan_;
    FormatOptions fmt_;
    Summary totals_;
};

}  // namespace probekit::trace
