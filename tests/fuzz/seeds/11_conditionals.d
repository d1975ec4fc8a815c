#if 0
#define T int
#else
#define T long
#endif
#ifdef X
#if 1
#endif
#define U \
  unsigned \
  short
provider c {
  probe a(T, U);
  probe b(long double);
};
#endif
#endif
#endif
