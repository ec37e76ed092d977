#ifndef FORMGATE_CZLIB_SHIM_H
#define FORMGATE_CZLIB_SHIM_H
#include <zlib.h>
#endif
