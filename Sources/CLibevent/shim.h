#ifndef FORMGATE_CLIBEVENT_SHIM_H
#define FORMGATE_CLIBEVENT_SHIM_H

// System headers first: libevent's event-config.h defines _GNU_SOURCE, and system headers
// seen after it would differ (fd_set's field names) from the same headers in the other
// modules (Dispatch, OpenSSL), which clang refuses.
#include <sys/types.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <stdint.h>
#include <stdarg.h>
#include <pthread.h>


#include <event2/event.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/listener.h>
#include <event2/dns.h>
#include <event2/thread.h>
#include <event2/util.h>

#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

/// evutil_socket_t and the event flag macros, as Swift-visible constants.
static const short FG_EV_TIMEOUT = EV_TIMEOUT;
static const short FG_EV_READ = EV_READ;
static const short FG_EV_WRITE = EV_WRITE;
static const short FG_EV_SIGNAL = EV_SIGNAL;
static const short FG_EV_PERSIST = EV_PERSIST;
static const short FG_BEV_EVENT_READING = BEV_EVENT_READING;
static const short FG_BEV_EVENT_WRITING = BEV_EVENT_WRITING;
static const short FG_BEV_EVENT_EOF = BEV_EVENT_EOF;
static const short FG_BEV_EVENT_ERROR = BEV_EVENT_ERROR;
static const short FG_BEV_EVENT_TIMEOUT = BEV_EVENT_TIMEOUT;
static const short FG_BEV_EVENT_CONNECTED = BEV_EVENT_CONNECTED;

/// Sets TCP_NODELAY on a connected socket; returns 0 or -1.
static inline int fg_set_nodelay(evutil_socket_t fd) {
    int one = 1;
    return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/// The last socket error of the calling thread, as a string.
static inline const char *fg_socket_error_string(void) {
    return evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR());
}

#endif
