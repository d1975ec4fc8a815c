// A library that the exit test links after libprobekit and that does not
// depend on it, so that glibc finalises it after libprobekit (_dl_fini runs
// independent objects' destructors in load order). Its destructor calls
// back into the executable, whose code is still mapped.
namespace {
void (*g_hook)();
__attribute__((destructor)) void exit_late_fini() {
  if (g_hook) g_hook();
}
}  // namespace

extern "C" __attribute__((visibility("default"))) void exit_late_set_hook(void (*hook)()) { g_hook = hook; }
