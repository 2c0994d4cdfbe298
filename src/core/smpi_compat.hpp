// Force-included after SMPI's smpi_helpers.h in the SMPI build (A2A_SMPI):
// its function-like `exit` macro breaks C++ members named exit (CLI11's
// App::exit); a2a never calls exit().
#pragma once
#undef exit
