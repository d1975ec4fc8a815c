#include "spec/diagnostics.h"

namespace probekit::spec {

std::string Diagnostic::format() const {
    std::string out = loc.file.empty() ? std::string("<input>") : loc.file.str();
    if (loc.line > 0) {
        out += ':' + std::to_string(loc.line);
        if (loc.col > 0) out += ':' + std::to_string(loc.col);
    }
    out += severity == Severity::Error ? ": error: " : ": warning: ";
    out += message;
    return out;
}

void Diagnostics::error(const Location& loc, std::string message) {
    list_.push_back({Severity::Error, loc, std::move(message)});
    ++errors_;
}

void Diagnostics::warning(const Location& loc, std::string message) {
    if (werror_) {
        error(loc, std::move(message) + " [-Werror]");
        return;
    }
    list_.push_back({Severity::Warning, loc, std::move(message)});
}

std::string Diagnostics::format_all() const {
    std::string out;
    for (const auto& d : list_) out += d.format() + '\n';
    return out;
}

}  // namespace probekit::spec
