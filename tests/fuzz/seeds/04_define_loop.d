#define A B
#define B C *
#define C A
#define SELF SELF
#define Oid unsigned int
#define F(x) x
#define
#define 1bad int
#undef Oid
#define Oid Oid
provider loop {
    probe a(A x);
    probe b(SELF);
    probe c(Oid, F);
};
