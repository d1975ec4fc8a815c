# 1 "probes.d"
# 1 "<built-in>" 1
#line 4294967295 "wrap.d"

# 0 ""
provider lm { probe a(int); };
# 7 "unterminated
#line
# 12 "other.d" 2 3 4
provider lm2 { probe b(unsigned double); };
