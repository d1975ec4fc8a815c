typedef char ********************************************************** deep_t;
provider ptr {
    probe a(char ************************************************************************************************ p);
    probe b(deep_t *******************************, const volatile void * const * restrict q);
    probe c(struct conn ********, union u *, enum e ***, string *);
};
