/*
 * ares-loop: the floor of item 2 (issue 32): the same names resolved by a C loop on c-ares alone, the
 * library hostpin sends its queries with, so that hostpin's CPU per name can be set against it.
 *
 *   ares-loop NAMES_FILE SERVER_IP PORT WINDOW
 *
 * One channel, configured as hostpin configures its own (Sources/CAres/shim.h: no search, EDNS(0) with
 * a 1232-octet payload, a 1 MiB receive buffer, the one server given), sockets reported by
 * ARES_OPT_SOCK_STATE_CB and waited for with poll(2), ares_process_fd doing the I/O. Each name's A query
 * is built with ares_create_query (its own ID, RD set, an OPT record: the message hostpin sends) and
 * sent with ares_send; WINDOW names are in flight at once (hostpin's --concurrency). Each answer is
 * parsed with ares_parse_a_reply and printed as "NAME ADDRESS" (hostpin prints a JSON line per name);
 * the last line is the number of names answered with an address.
 */
#include <ares.h>
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#define MAX_SOCKETS 64

struct sockets {
    int count;
    struct pollfd fds[MAX_SOCKETS];
};

static char **names;
static size_t name_count, next_name, in_flight, answered;
static FILE *out;

/* The sockets c-ares wants watched: added, changed or (neither read nor write) removed. */
static void sock_state(void *data, ares_socket_t fd, int readable, int writable) {
    struct sockets *s = data;
    int i;
    for (i = 0; i < s->count && s->fds[i].fd != fd; i++) {}
    if (!readable && !writable) {
        if (i < s->count) s->fds[i] = s->fds[--s->count];
        return;
    }
    if (i == s->count) {
        if (s->count == MAX_SOCKETS) { fprintf(stderr, "ares-loop: too many sockets\n"); exit(1); }
        s->count++;
    }
    s->fds[i].fd = fd;
    s->fds[i].events = (short)((readable ? POLLIN : 0) | (writable ? POLLOUT : 0));
    s->fds[i].revents = 0;
}

static void answered_cb(void *arg, int status, int timeouts, unsigned char *abuf, int alen) {
    const char *name = arg;
    struct ares_addrttl addrs[8];
    int naddrs = 8;
    char text[INET_ADDRSTRLEN];
    (void)timeouts;
    in_flight--;
    if (status != ARES_SUCCESS) {
        fprintf(stderr, "ares-loop: %s: %s\n", name, ares_strerror(status));
        return;
    }
    if (ares_parse_a_reply(abuf, alen, NULL, addrs, &naddrs) != ARES_SUCCESS || naddrs < 1) {
        fprintf(stderr, "ares-loop: %s: no address\n", name);
        return;
    }
    inet_ntop(AF_INET, &addrs[0].ipaddr, text, sizeof text);
    fprintf(out, "%s %s\n", name, text);
    answered++;
}

/* Sends names until WINDOW are in flight or none is left. */
static void fill(ares_channel channel, size_t window) {
    while (in_flight < window && next_name < name_count) {
        const char *name = names[next_name++];
        unsigned char *query;
        int length;
        unsigned short id = (unsigned short)random();
        if (ares_create_query(name, 1 /* C_IN */, 1 /* T_A */, id, 1, &query, &length, 1232) != ARES_SUCCESS) {
            fprintf(stderr, "ares-loop: %s: cannot build the query\n", name);
            continue;
        }
        in_flight++;
        ares_send(channel, query, length, answered_cb, (void *)name);
        ares_free_string(query);
    }
}

static void read_names(const char *path) {
    FILE *f = fopen(path, "r");
    char line[512];
    size_t capacity = 1024;
    if (!f) { perror(path); exit(1); }
    names = malloc(capacity * sizeof *names);
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = 0;
        if (!line[0]) continue;
        if (name_count == capacity) names = realloc(names, (capacity *= 2) * sizeof *names);
        names[name_count++] = strdup(line);
    }
    fclose(f);
}

int main(int argc, char **argv) {
    struct sockets sockets = { 0 };
    struct ares_options options;
    ares_channel channel;
    char server[128];
    size_t window;
    int status;
    static char lookups[] = "b";

    if (argc != 5) { fprintf(stderr, "usage: ares-loop NAMES_FILE SERVER_IP PORT WINDOW\n"); return 2; }
    read_names(argv[1]);
    window = (size_t)strtoul(argv[4], NULL, 10);
    if (window < 1) window = 1;
    out = stdout;
    srandom((unsigned)time(NULL));

    ares_library_init(ARES_LIB_INIT_ALL);
    memset(&options, 0, sizeof options);
    options.flags = ARES_FLAG_NOSEARCH | ARES_FLAG_NOALIASES | ARES_FLAG_EDNS | ARES_FLAG_NOCHECKRESP;
    options.timeout = 2000;
    options.tries = 2;
    options.lookups = lookups;
    options.ednspsz = 1232;
    options.socket_receive_buffer_size = 1 << 20;
    options.sock_state_cb = sock_state;
    options.sock_state_cb_data = &sockets;
    status = ares_init_options(&channel, &options,
                               ARES_OPT_FLAGS | ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES | ARES_OPT_DOMAINS
                               | ARES_OPT_LOOKUPS | ARES_OPT_EDNSPSZ | ARES_OPT_SOCK_RCVBUF
                               | ARES_OPT_NOROTATE | ARES_OPT_SOCK_STATE_CB);
    if (status != ARES_SUCCESS) { fprintf(stderr, "ares-loop: %s\n", ares_strerror(status)); return 1; }
    snprintf(server, sizeof server, "%s:%s", argv[2], argv[3]);
    status = ares_set_servers_ports_csv(channel, server);
    if (status != ARES_SUCCESS) { fprintf(stderr, "ares-loop: %s: %s\n", server, ares_strerror(status)); return 1; }

    fill(channel, window);
    while (in_flight > 0) {
        struct timeval storage, *next = ares_timeout(channel, NULL, &storage);
        int timeout = next ? (int)(next->tv_sec * 1000 + (next->tv_usec + 999) / 1000) : -1;
        int ready = poll(sockets.fds, (nfds_t)sockets.count, timeout), i, n;
        struct pollfd ready_fds[MAX_SOCKETS];
        if (ready < 0 && errno != EINTR) { perror("poll"); return 1; }
        /* A copy: ares_process_fd may change the socket set through sock_state. */
        n = sockets.count;
        memcpy(ready_fds, sockets.fds, (size_t)n * sizeof *ready_fds);
        if (ready <= 0) ares_process_fd(channel, ARES_SOCKET_BAD, ARES_SOCKET_BAD);
        for (i = 0; i < n; i++) {
            short r = ready_fds[i].revents;
            if (!r) continue;
            ares_process_fd(channel, (r & (POLLIN | POLLERR | POLLHUP | POLLNVAL)) ? ready_fds[i].fd : ARES_SOCKET_BAD,
                            (r & POLLOUT) ? ready_fds[i].fd : ARES_SOCKET_BAD);
        }
        fill(channel, window);
    }
    ares_destroy(channel);
    ares_library_cleanup();
    printf("%zu\n", answered);
    return answered == name_count ? 0 : 1;
}
