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
// Names of the generated header's internals for one probe: the C wrapper and
// C++ struct (`probekit_app_req__start`), the C out-of-line function (that +
// "_slow") and the macro holding its .note.probekit asm.
std::string internal_name(const std::string& provider, const std::string& probe);
std::string meta_macro_name(const std::string& provider, const std::string& probe);
// Whether a generated name would clash with the marker's and helpers' own
// names (PROBEKIT_SITE3, probekit_gen_v1, ...).
bool is_reserved_name(const std::string& name);

}  // namespace probekit::spec

namespace probekit::spec {

// The name an argument is shown under in generated scripts and pages: its
// name as written, or `argN` counting from 1 (as the header's messages and
// SystemTap's `$argN` count) when the spec gives none.
std::string arg_label(const std::string& name, std::size_t index);
// The SystemTap alias of a probe in the generated tapset (`app.req_start`):
// the provider as written, and the probe with `__` as `_`, the spelling
// stap's own tapsets use; the spec's checks already refuse probe names that
// would meet (`a__b` and `a_b`, which share a macro name).
std::string stap_alias_name(const std::string& provider, const std::string& probe);

}  // namespace probekit::spec
