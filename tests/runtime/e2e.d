/* Probes for the runtime's end-to-end tests (e2e_*.c, e2e_*.cc). */
provider e2e {
  /** A request starts. */
  probe req__start(int fd, string path);
  probe values(int8_t a, uint16_t b, float f, double d, bool ok, void *p);
  probe neg(long long v, short s);
  probe tick();
  probe ctor(int n);
};
