#pragma D attributes Evolving/Evolving/Common provider p provider
#pragma D attributes Private/Private/Unknown provider p module
#pragma Dx nothing
#pragma
#pragma D
#include "x.h"
#error nope
provider p {
    probe a(int);
    probe b(
