provider s { probe a(string, char, signed char, unsigned char *); };
foo:::bar { x = "unterminated \" escaped quote; y = '\''; z = "\\"; }
'a
"
