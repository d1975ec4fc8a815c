#pragma D option quiet
inline int MAX = 13;
extern int errno;
translator pyinfo < struct frame *f > {
    name = stringof(f->name);
};
dtrace:helper:ustack:
/this->valid/
{
    this->p = (struct frame *)arg0;
    @["x"] = count();
}
provider python {
    probe function__entry(const char *, const char *, int) : (pyinfo_t *f);
    probe gc__done(long);
};
BEGIN { exit(0); }
