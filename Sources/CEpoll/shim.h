#ifndef HOSTPIN_EPOLL_SHIM_H
#define HOSTPIN_EPOLL_SHIM_H
/* HostPinNet's event loop: epoll, eventfd and accept4, and the CONNECT tunnel's splice and pipe2, which
   Swift's Glibc module does not export. */
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

/* Declared by <sys/socket.h> only under _GNU_SOURCE, which the Glibc module is built without. */
extern int accept4(int fd, struct sockaddr *address, socklen_t *length, int flags);

/* <fcntl.h> and <unistd.h> declare these only under _GNU_SOURCE too (splice(2), pipe2(2)). */
extern long splice(int fd_in, long long *off_in, int fd_out, long long *off_out, unsigned long len, unsigned int flags);
extern int pipe2(int pipefd[2], int flags);
static const unsigned int HOSTPIN_SPLICE_F_MOVE = 1;
static const unsigned int HOSTPIN_SPLICE_F_NONBLOCK = 2;
static const int HOSTPIN_F_SETPIPE_SZ = 1031;
#endif
