#ifndef HOSTPIN_CIDN2_SHIM_H
#define HOSTPIN_CIDN2_SHIM_H
#include <idn2.h>

/* Flags as plain ints: idn2.h declares them as an anonymous enum. */
static const int HOSTPIN_IDN2_NONTRANSITIONAL = IDN2_NONTRANSITIONAL;
static const int HOSTPIN_IDN2_OK = IDN2_OK;
#endif
