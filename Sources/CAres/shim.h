#ifndef HOSTPIN_CARES_SHIM_H
#define HOSTPIN_CARES_SHIM_H
#include <string.h>
#include <ares.h>
/* The owner thread of a channel is woken by an eventfd; Swift's Glibc module does not export it. */
#include <sys/eventfd.h>
/* Query IDs come from getrandom(2) (QueryID.swift); Swift's Glibc module does not export it either. */
#include <sys/random.h>

/*
 * Status codes and flags as plain ints. c-ares 1.18 #defines them (Swift sees Int32);
 * from 1.21 the status codes are an enum (ares_status_t) while callbacks still pass
 * `int`, so Swift code compares against these constants on either version.
 */
static const int HOSTPIN_ARES_SUCCESS = ARES_SUCCESS;
static const int HOSTPIN_ARES_EFORMERR = ARES_EFORMERR;
static const int HOSTPIN_ARES_EBADRESP = ARES_EBADRESP;
static const int HOSTPIN_ARES_ECONNREFUSED = ARES_ECONNREFUSED;
static const int HOSTPIN_ARES_ETIMEOUT = ARES_ETIMEOUT;
static const int HOSTPIN_ARES_EOF = ARES_EOF;
static const int HOSTPIN_ARES_ENOMEM = ARES_ENOMEM;
static const int HOSTPIN_ARES_EDESTRUCTION = ARES_EDESTRUCTION;
static const int HOSTPIN_ARES_ECANCELLED = ARES_ECANCELLED;

static const int HOSTPIN_ARES_LIB_INIT_ALL = ARES_LIB_INIT_ALL;
static const int HOSTPIN_ARES_SOCKET_BAD = ARES_SOCKET_BAD;

/*
 * Creates a channel for one upstream server (or the system's, when none is set) that only carries
 * the queries HostPin builds with ldns (hostpin_ares_send): no /etc/hosts ("b"), no search domains,
 * and - where the library has one (c-ares >= 1.31) - c-ares's own query cache off, so HostPin's
 * cache is the only one. `use_tcp` sends every query over TCP (ARES_FLAG_USEVC).
 * ARES_FLAG_EDNS with `edns_payload_size`, the size the OPT record of HostPin's queries advertises:
 * c-ares accepts UDP replies up to that size (larger or TC ones are asked again over TCP). An
 * upstream that answers FORMERR without OPT gets that query again without its OPT record (1.18),
 * but the channel then stops expecting EDNS: the OPT-carrying queries that follow fail on such an
 * upstream (FORMERR is a bad response), which moves them to the next one.
 * ARES_FLAG_NOCHECKRESP: a SERVFAIL or REFUSED reply reaches HostPin at once (ARES_SUCCESS with the
 * reply), instead of c-ares retrying it and then reporting ARES_ECONNREFUSED (1.18): HostPin reads
 * the RCODE, moves to the next upstream itself and names the failure exactly.
 */
static inline int hostpin_ares_init_channel(ares_channel *channel,
                                            int timeout_ms, int tries, int use_tcp, int edns_payload_size,
                                            ares_sock_state_cb sock_state_cb, void *sock_state_data) {
    struct ares_options options;
    int optmask = 0;
    static char lookups[] = "b";
    memset(&options, 0, sizeof(options));
    options.flags = ARES_FLAG_NOSEARCH | ARES_FLAG_NOALIASES | ARES_FLAG_EDNS | ARES_FLAG_NOCHECKRESP | (use_tcp ? ARES_FLAG_USEVC : 0);
    options.timeout = timeout_ms;
    options.tries = tries;
    options.ndomains = 0;
    options.domains = NULL;
    options.lookups = lookups;
    options.ednspsz = edns_payload_size;
    /* Many answers can arrive at once on one UDP socket (a batch of lookups): a small default receive
       buffer drops them and the queries time out. */
    options.socket_receive_buffer_size = 1 << 20;
    options.sock_state_cb = sock_state_cb;
    options.sock_state_cb_data = sock_state_data;
    optmask = ARES_OPT_FLAGS | ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES | ARES_OPT_DOMAINS
            | ARES_OPT_LOOKUPS | ARES_OPT_EDNSPSZ | ARES_OPT_SOCK_RCVBUF | ARES_OPT_NOROTATE | ARES_OPT_SOCK_STATE_CB;
#if defined(ARES_OPT_QUERY_CACHE)
    options.qcache_max_ttl = 0;
    optmask |= ARES_OPT_QUERY_CACHE;
#endif
    return ares_init_options(channel, &options, optmask);
}

/*
 * Sends `qbuf`, a whole DNS query, and passes the raw reply to `callback`: c-ares does the tries,
 * timeouts, TCP after truncation, and matches the reply's ID and question. c-ares 1.34 deprecates
 * ares_send in favour of ares_send_dnsrec, which takes c-ares's own message type; HostPin builds and
 * reads messages with ldns and 1.18 (Debian 12) has no ares_send_dnsrec, so it keeps ares_send and
 * silences the deprecation here, where it is called, to keep a build against 1.34 headers free of
 * warnings.
 */
static inline void hostpin_ares_send(ares_channel channel, const unsigned char *qbuf, int qlen,
                                     ares_callback callback, void *arg) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    ares_send(channel, qbuf, qlen, callback, arg);
#pragma GCC diagnostic pop
}

/*
 * Builds one query of class IN with RD set and ID `id`, with an OPT record advertising
 * `edns_payload_size` (RFC 6891), into a buffer c-ares allocates (free it with ares_free_string).
 * c-ares 1.34 deprecates ares_create_query in favour of ares_dns_record_create, which 1.18 lacks;
 * silenced here as for ares_send.
 */
static inline int hostpin_ares_create_query(const char *name, int type, unsigned short id, int edns_payload_size,
                                            unsigned char **buf, int *buflen) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    return ares_create_query(name, 1, type, id, 1, buf, buflen, edns_payload_size);
#pragma GCC diagnostic pop
}
#endif
