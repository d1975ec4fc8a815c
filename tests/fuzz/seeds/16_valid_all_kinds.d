/* A spec that loads: every argument kind, so the backends are fuzzed too. */
#pragma D attributes Evolving/Evolving/Common provider kinds provider
#define Oid unsigned int
typedef struct conn conn_t;
typedef unsigned long long u64;
provider kinds {
    /**
     * Every kind of argument.
     */
    probe all__kinds(int i, unsigned u, char c, bool b, float f, double d,
                     const char *s, string str, struct conn *p, Oid oid, u64 big, uintptr_t up);
    probe opaque(conn_t c, mytype_t m);
    probe none();
    probe tr(int a) : (string b);
};
provider other { probe x(caddr_t, hrtime_t, off64_t); };
