/* A module for the thread dump tests: an object with a constructor, so that
   dlopen runs code under the loader lock (the dlopen/dlclose loop), and a
   function that blocks in a frame of this module (a dump taken after the
   module was loaded must symbolize it). */
#include <unistd.h>

static volatile int loaded;
__attribute__((constructor)) static void on_load(void) { loaded = 1; }
int threads_dl_module_value(void) { return loaded; }

__attribute__((noinline)) int threads_dl_module_block(int fd) {
    char c;
    const int r = (int)read(fd, &c, 1);
    __asm__ volatile("" ::: "memory"); /* not a tail call: this frame stays */
    return r;
}
