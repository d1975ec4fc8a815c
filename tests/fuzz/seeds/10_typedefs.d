typedef struct conn { int fd; struct { char c; } x; } conn_t, *conn_p, **conn_pp;
typedef unsigned long long u64, *pu64;
typedef int arr_t[16];
typedef enum { A, B } e_t;
typedef u64 u64b;
provider td {
    probe a(conn_t c, conn_p p, conn_pp pp, u64 v, pu64 pv, e_t e, u64b w, arr_t a);
};
typedef int;
typedef;
