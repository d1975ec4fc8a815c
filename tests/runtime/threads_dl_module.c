/* A module for the dlopen/dlclose loop of the thread dump test: an object
   with a constructor, so that dlopen runs code under the loader lock. */
static volatile int loaded;
__attribute__((constructor)) static void on_load(void) { loaded = 1; }
int threads_dl_module_value(void) { return loaded; }
