/* probekit thread dumps (libprobekit): the stacks of every thread of the
 * process, on demand, from an external signal or `probekit threads PID`, and
 * on a fatal signal. C API; docs/threads.md describes the model, the modes
 * and exactly what each can do to the application.
 *
 * In short: threads register (one call at thread start); a dump signals the
 * registered threads, each copies its registers and a window of its own stack
 * into its preallocated slot inside the signal handler (async-signal-safe, no
 * lock, no allocation, no unwinder), and the requesting thread unwinds those
 * copies afterwards with libdw and symbolizes them. Threads that never
 * registered are still listed, from /proc/self/task.
 *
 * Functions returning int return PROBEKIT_OK (0) or a negative
 * PROBEKIT_E_* / PROBEKIT_THREADS_E_* code; probekit_threads_strerror names
 * both.
 */
#ifndef PROBEKIT_THREADS_H
#define PROBEKIT_THREADS_H 1

#include <probekit/runtime.h>

#include <stddef.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

enum probekit_threads_status {
  /* A dump was requested from a place where running one would deadlock or
     recurse: inside a thread's state callback, a thread_dump probe callback,
     or a libprobekit signal handler. Use probekit_threads_request() there. */
  PROBEKIT_THREADS_E_BUSY = -20,
  PROBEKIT_THREADS_E_SYSTEM = -21, /* a system call failed; errno says which */
  PROBEKIT_THREADS_E_TOO_SMALL = -22 /* the buffer is too small; *needed says how big */
};

PROBEKIT_API const char *probekit_threads_strerror(int status);

/* ---- registration ---- */

/* Appends the application's own view of a thread (current request, queue
   depth) to its entry. Called on the dumping thread, not on the thread
   itself, while the dump runs: it must not block for long and must not
   request a dump (that returns PROBEKIT_THREADS_E_BUSY). Write at most
   len - 1 bytes and a NUL into buf. */
typedef void (*probekit_thread_state_fn)(char *buf, size_t len, void *data);

/* Registers the calling thread: allocates its slot (the stack window) and
   installs the capture signal's handler on first use. name may be NULL (the
   kernel's thread name is used); fn may be NULL. Registering again replaces
   the name and callback. The slot is released by
   probekit_thread_unregister() or automatically when the thread exits. */
PROBEKIT_API int probekit_thread_register(const char *name, probekit_thread_state_fn fn, void *data);
PROBEKIT_API int probekit_thread_unregister(void);

/* Marks progress of the calling registered thread (a loop iteration, a
   request done): one relaxed atomic increment. A dump shows a thread that
   ran without marking progress since the previous dump as looking stuck,
   and the watchdog counts from it. No-op for unregistered threads. */
PROBEKIT_API void probekit_thread_progress(void);

/* ---- configuration (call before the first registration) ---- */

struct probekit_threads_config {
  int signal;            /* capture signal; 0 = SIGWINCH (docs/threads.md: why) */
  size_t stack_window;   /* bytes of stack copied per thread; 0 = 32 KiB */
};
/* Fails with PROBEKIT_E_INVALID for a real-time, SIGKILL/SIGSTOP or fatal
   signal, and with PROBEKIT_THREADS_E_BUSY once the handler is installed
   (the first registration, probekit_threads_serve or the panic handler). */
PROBEKIT_API int probekit_threads_configure(const struct probekit_threads_config *config);

/* ---- dumps ---- */

enum probekit_threads_mode {
  /* Default: signal only threads that are running (state R); report blocked
     threads from /proc (system call, wait channel) without a stack. No
     system call of the application is interrupted. */
  PROBEKIT_THREADS_RUNNING = 0,
  /* Signal every registered thread: stacks for all, but a thread blocked in
     nanosleep, or in a call without SA_RESTART semantics, sees EINTR. */
  PROBEKIT_THREADS_INTERRUPT_ALL = 1
};

enum probekit_threads_format {
  PROBEKIT_THREADS_TEXT = 0,
  PROBEKIT_THREADS_JSON = 1
};

struct probekit_dump_options {
  int mode;          /* enum probekit_threads_mode */
  int format;        /* enum probekit_threads_format */
  int file_line;     /* non-zero: add file:line from DWARF where available */
  int timeout_ms;    /* how long to wait for signalled threads; 0 = 200 ms */
};

/* Dumps into buf (NUL-terminated). When buf is too small, returns
   PROBEKIT_THREADS_E_TOO_SMALL and the size needed in *needed (if not NULL);
   the next call takes a new dump. opts may be NULL (defaults). */
PROBEKIT_API int probekit_threads_dump(char *buf, size_t len, size_t *needed,
                                       const struct probekit_dump_options *opts);
/* Dumps and writes the whole text to fd (write(2), retried on EINTR). */
PROBEKIT_API int probekit_threads_dump_fd(int fd, const struct probekit_dump_options *opts);

/* ---- triggers ---- */

/* Starts serving external requests: the capture signal sent by another
   process (`kill -WINCH PID`) writes a dump to the sink, and
   `probekit threads PID` gets one back over a unix socket. sink_path NULL:
   stderr; otherwise a new file, created with mode 0600 and never through a
   symbolic link or over an existing file (O_CREAT|O_EXCL|O_NOFOLLOW); "%p" in
   it becomes the pid and "%n" the dump's number. Starts one service thread,
   blocked in read(2) until a request arrives. */
PROBEKIT_API int probekit_threads_serve(const char *sink_path);

/* Async-signal-safe: asks the service thread for a dump to the sink. For use
   in signal handlers. PROBEKIT_E_INVALID when probekit_threads_serve() has
   not run. */
PROBEKIT_API int probekit_threads_request(void);

/* Opt-in panic handler for SIGSEGV, SIGBUS, SIGILL, SIGFPE and SIGABRT: dumps
   every thread to the sink (the faulting one first, with the fault address),
   then restores the default action and re-raises, so the exit status and the
   core dump are what they would have been. Starts the service thread. */
PROBEKIT_API int probekit_threads_install_panic(const char *sink_path);

/* Opt-in watchdog: every registered thread that has marked progress at least
   once gets a timer on its own CPU clock (it fires only while the thread
   runs: sleeping threads cost nothing). After warn_ms of CPU without
   probekit_thread_progress() the thread's stack goes to the sink (once per
   episode); after panic_ms (0: never) it raises SIGABRT, which the panic
   handler, if installed, turns into a full dump. Starts the service thread. */
PROBEKIT_API int probekit_threads_watchdog(unsigned warn_ms, unsigned panic_ms, const char *sink_path);

#ifdef __cplusplus
}
#endif

#endif
