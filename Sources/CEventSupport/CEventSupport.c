// Kept apart from the CLibevent module: with struct bufferevent complete, Swift would import
// every bufferevent pointer as a typed pointer instead of an OpaquePointer.
#include <malloc.h>

#include <event2/event.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_struct.h>

#include "CEventSupport.h"

void fg_bufferevent_stop_writing(void *bufferevent) {
    // struct bufferevent's layout is public (event2/bufferevent_struct.h) and fixed in 2.1.
    event_del(&((struct bufferevent *)bufferevent)->ev_write);
}

void fg_set_malloc_thresholds(int mmap_threshold, int trim_threshold) {
    mallopt(M_MMAP_THRESHOLD, mmap_threshold);
    mallopt(M_TRIM_THRESHOLD, trim_threshold);
}
