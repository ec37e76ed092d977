#ifndef FORMGATE_CYAML_SHIM_H
#define FORMGATE_CYAML_SHIM_H
#include <yaml.h>
#endif
