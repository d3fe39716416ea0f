#ifndef HOSTPIN_HIREDIS_SHIM_H
#define HOSTPIN_HIREDIS_SHIM_H
/*
 * hiredis 0.14 (Debian 12's libhiredis-dev): the shared cache's Redis client, plain TCP through its
 * synchronous API on a thread of HostPin's own (docs/ARCHITECTURE.md, "Shared cache"). Its variadic
 * redisCommand cannot be called from Swift, so commands go through redisAppendCommandArgv.
 */
#include <sys/time.h>
#include <hiredis/hiredis.h>
#endif
