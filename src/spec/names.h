// Names that generated code and consumers derive from provider and probe names.
#pragma once

#include <string>

namespace probekit::spec {

// SystemTap's mapping: probe `req__start` of provider `app` is APP_REQ_START.
std::string macro_name(const std::string& provider, const std::string& probe);
// `app_req__start_semaphore`, as sys/sdt.h and SystemTap's dtrace name it.
std::string semaphore_name(const std::string& provider, const std::string& probe);
// How stap, bpftrace and DTrace show the probe: `__` becomes `-`.
std::string display_name(const std::string& probe);

}  // namespace probekit::spec
