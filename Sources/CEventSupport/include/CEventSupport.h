#ifndef FORMGATE_CEVENTSUPPORT_H
#define FORMGATE_CEVENTSUPPORT_H

/// Stops a plain bufferevent's write event after its output was written directly and is
/// empty (what libevent's own write callback does when it drains the output). Armed and
/// disarmed within one loop iteration, the epoll changelist folds the pair into no system
/// call. `bufferevent` is a `struct bufferevent *`.
void fg_bufferevent_stop_writing(void *bufferevent);

/// Sets glibc's malloc thresholds: blocks of `mmap_threshold` bytes and more are mapped one
/// by one; free memory above `trim_threshold` at the top of an arena goes back to the kernel.
void fg_set_malloc_thresholds(int mmap_threshold, int trim_threshold);

#endif
