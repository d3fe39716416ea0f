#ifndef HOSTPIN_LDNS_SHIM_H
#define HOSTPIN_LDNS_SHIM_H
/*
 * ldns (NLnet Labs) builds HostPin's DNS queries and reads whole replies - header flags, RCODE,
 * every section, EDNS - so HostPin has no DNS message parser or writer of its own.
 */
#include <stdlib.h>
/* Before ldns: its headers then use C's bool (Swift's Bool), as the library was built with, instead of
   their `signed char` fallback. */
#include <stdbool.h>
#include <ldns/ldns.h>
#endif
