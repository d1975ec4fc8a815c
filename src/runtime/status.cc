// probekit_strerror: the status codes of runtime.h in words.
#include <probekit/runtime.h>

extern "C" const char *probekit_strerror(int status) {
  switch (status) {
    case PROBEKIT_OK: return "success";
    case PROBEKIT_E_INVALID: return "invalid argument";
    case PROBEKIT_E_NO_PROBE: return "no such probe";
    case PROBEKIT_E_EXISTS: return "already registered";
    case PROBEKIT_E_NOT_FOUND: return "no such registration";
    case PROBEKIT_E_NO_MEMORY: return "out of memory";
    case PROBEKIT_E_TYPE: return "callback types do not fit the probe's arguments";
    case PROBEKIT_E_FULL: return "gate count saturated";
    default: return "unknown status";
  }
}
