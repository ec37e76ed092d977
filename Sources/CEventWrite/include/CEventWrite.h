#ifndef FORMGATE_CEVENTWRITE_H
#define FORMGATE_CEVENTWRITE_H

/// Stops a plain bufferevent's write event after its output was written directly and is
/// empty (what libevent's own write callback does when it drains the output). Armed and
/// disarmed within one loop iteration, the epoll changelist folds the pair into no system
/// call. `bufferevent` is a `struct bufferevent *`.
void fg_bufferevent_stop_writing(void *bufferevent);

#endif
