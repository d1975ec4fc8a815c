provider forms {
    probe none();
    probe v(void);
    probe vp(void *);
    probe bad_void(void x);
    probe arr(int a[4]);
    probe fnptr(int (*cb)(int));
    probe body(struct s { int a; } v);
    probe byval(struct s v, union u w, enum e x);
    probe tr(int a) : (string b, struct t *c);
    probe words(unsigned, signed, long long int, unsigned long long, short int, long double, unsigned double, long long long, char char, _Bool, bool, float, double);
    probe missing(int a, int b
};
