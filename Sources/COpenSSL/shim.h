#ifndef HOSTPIN_OPENSSL_SHIM_H
#define HOSTPIN_OPENSSL_SHIM_H
/*
 * OpenSSL's libcrypto (libssl-dev), which libcurl links already: only HMAC-SHA-256 and the
 * constant-time comparison, for the shared cache's values (docs/ARCHITECTURE.md, "Shared cache").
 */
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#endif
