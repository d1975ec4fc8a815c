/*
 * The probes of probekit's runtime, libprobekit (docs/runtime.md): external
 * tracers (stap, bpftrace, gdb, perf) and in-process listeners can watch the
 * runtime itself. Compiled by this build's own `probekit compile` into the
 * header the runtime includes (src/runtime/own_probes.cc).
 */
provider probekit {
  /** A callback was registered on a probe; key identifies its tracer. */
  probe callback__registered(string provider, string name, uint64_t key);
  /** A callback was removed from a probe (unregistered, or its tracer's key removed). */
  probe callback__unregistered(string provider, string name, uint64_t key);
  /** A probe of a loaded object became known to the runtime. */
  probe probe__insert(string provider, string name);
  /** A probe of an object being unloaded left the runtime. */
  probe probe__remove(string provider, string name);
  /** A statedump provider starts dumping its state for a tracer's key. */
  probe statedump__begin(string name, uint64_t key);
  /** A statedump provider finished dumping its state for a tracer's key. */
  probe statedump__end(string name, uint64_t key);
  /** A dump of the process's threads (fired by the thread-dump code): its text, length in bytes and thread count. */
  probe thread_dump(string text, uint64_t length, int32_t threads);
};
