provider app { probe a(); };
syscall::read:entry
/pid == $target && (this->x = 1)/
{
    { { self->depth++; { trace("}"); } } }
    printf("%s", '}');
}
struct s { int a; struct { int b; union { char c; } u; } inner; };
