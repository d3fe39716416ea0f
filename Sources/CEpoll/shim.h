#ifndef HOSTPIN_EPOLL_SHIM_H
#define HOSTPIN_EPOLL_SHIM_H
/* What Swift's Glibc module does not export: HostPinNet's event loop (epoll, eventfd, accept4), the
   CONNECT tunnel's splice and pipe2, the peer credentials of a Unix socket (SO_PEERCRED), the
   batched datagram calls (recvmmsg, sendmmsg), and malloc_trim (the stub's heap after a burst). */
#include <malloc.h>
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

/* <fcntl.h> and <unistd.h> declare these only under _GNU_SOURCE too (splice(2), pipe2(2)). */
extern long splice(int fd_in, long long *off_in, int fd_out, long long *off_out, unsigned long len, unsigned int flags);
extern int pipe2(int pipefd[2], int flags);
static const unsigned int HOSTPIN_SPLICE_F_MOVE = 1;
static const unsigned int HOSTPIN_SPLICE_F_NONBLOCK = 2;
static const int HOSTPIN_F_SETPIPE_SZ = 1031;

/* recvmmsg(2) and sendmmsg(2), and their struct mmsghdr (same layout, its own name), declared by
   <sys/socket.h> only under _GNU_SOURCE: the DNS stub's UDP sockets receive and answer in batches. */
struct hostpin_mmsghdr {
    struct msghdr msg_hdr;
    unsigned int msg_len;
};
/* timeout: a struct timespec *, always NULL here. */
extern int recvmmsg(int fd, struct hostpin_mmsghdr *vmessages, unsigned int vlen, int flags, void *timeout);
extern int sendmmsg(int fd, struct hostpin_mmsghdr *vmessages, unsigned int vlen, int flags);
static const int HOSTPIN_MSG_WAITFORONE = 0x10000;
#endif
