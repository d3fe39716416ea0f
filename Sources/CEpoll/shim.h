#ifndef HOSTPIN_EPOLL_SHIM_H
#define HOSTPIN_EPOLL_SHIM_H
/* HostPinNet's event loop: epoll, eventfd and accept4, which Swift's Glibc module does not export; and the
   peer credentials of a Unix socket (SO_PEERCRED). */
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

/* Declared by <sys/socket.h> only under _GNU_SOURCE, which the Glibc module is built without. */
extern int accept4(int fd, struct sockaddr *address, socklen_t *length, int flags);

/* What getsockopt(SO_PEERCRED) fills in (socket(7)): <sys/socket.h> names it struct ucred only under
   _GNU_SOURCE. */
struct hostpin_peer_credentials {
    pid_t pid;
    uid_t uid;
    gid_t gid;
};
#endif
