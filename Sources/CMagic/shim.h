#ifndef FORMGATE_CMAGIC_SHIM_H
#define FORMGATE_CMAGIC_SHIM_H
#include <magic.h>
#endif
