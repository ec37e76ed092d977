#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>

#include "CEventSupport.h"

int fg_set_malloc_thresholds(int mmap_threshold, int trim_threshold) {
    // mallopt returns 1 on success and 0 on error.
    int mapped = mallopt(M_MMAP_THRESHOLD, mmap_threshold);
    int trimmed = mallopt(M_TRIM_THRESHOLD, trim_threshold);
    return mapped == 1 && trimmed == 1 ? 0 : -1;
}

int fg_set_thread_name(const char *name) {
    // pthread_setname_np is a GNU extension, out of sight of Swift's Glibc module.
    return pthread_setname_np(pthread_self(), name);
}
