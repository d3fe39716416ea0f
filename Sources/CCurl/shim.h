#ifndef HOSTPIN_CCURL_SHIM_H
#define HOSTPIN_CCURL_SHIM_H
#include <curl/curl.h>

/*
 * curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot call: one typed wrapper
 * per argument kind.
 */
static inline CURLcode hostpin_curl_setopt_long(CURL *easy, CURLoption option, long value) {
    return curl_easy_setopt(easy, option, value);
}
static inline CURLcode hostpin_curl_setopt_offset(CURL *easy, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(easy, option, value);
}
static inline CURLcode hostpin_curl_setopt_pointer(CURL *easy, CURLoption option, const void *value) {
    return curl_easy_setopt(easy, option, value);
}
static inline CURLcode hostpin_curl_setopt_string(CURL *easy, CURLoption option, const char *value) {
    return curl_easy_setopt(easy, option, value);
}
static inline CURLcode hostpin_curl_setopt_write(CURL *easy, CURLoption option,
                                                 size_t (*callback)(char *, size_t, size_t, void *)) {
    return curl_easy_setopt(easy, option, callback);
}
static inline CURLcode hostpin_curl_setopt_opensocket(CURL *easy, CURLoption option,
                                                      curl_socket_t (*callback)(void *, curlsocktype,
                                                                                struct curl_sockaddr *)) {
    return curl_easy_setopt(easy, option, callback);
}
static inline CURLcode hostpin_curl_getinfo_long(CURL *easy, CURLINFO info, long *value) {
    return curl_easy_getinfo(easy, info, value);
}
static inline CURLcode hostpin_curl_getinfo_pointer(CURL *easy, CURLINFO info, void **value) {
    return curl_easy_getinfo(easy, info, value);
}
static inline CURLcode hostpin_curl_getinfo_string(CURL *easy, CURLINFO info, char **value) {
    return curl_easy_getinfo(easy, info, value);
}
static inline CURLcode hostpin_curl_getinfo_offset(CURL *easy, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(easy, info, value);
}
static inline CURLcode hostpin_curl_getinfo_socket(CURL *easy, CURLINFO info, curl_socket_t *value) {
    return curl_easy_getinfo(easy, info, value);
}

/* Written by a write callback to pause the transfer (flow control). */
static const size_t HOSTPIN_CURL_WRITEFUNC_PAUSE = CURL_WRITEFUNC_PAUSE;
static const int HOSTPIN_CURLPAUSE_CONT = CURLPAUSE_CONT;
static const size_t HOSTPIN_CURL_READFUNC_ABORT = CURL_READFUNC_ABORT;
static const int HOSTPIN_CURLH_HEADER = CURLH_HEADER;
static const CURLversion HOSTPIN_CURLVERSION_NOW = CURLVERSION_NOW;
static const curl_socket_t HOSTPIN_CURL_SOCKET_BAD = CURL_SOCKET_BAD;
#endif
