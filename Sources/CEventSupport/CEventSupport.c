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

void fg_seqlock_write(uint64_t *slot, size_t offset, const uint64_t *source, size_t count) {
    uint64_t sequence = __atomic_load_n(&slot[0], __ATOMIC_RELAXED);
    __atomic_store_n(&slot[0], sequence + 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    for (size_t index = 0; index < count; index++) {
        __atomic_store_n(&slot[1 + offset + index], source[index], __ATOMIC_RELAXED);
    }
    __atomic_store_n(&slot[0], sequence + 2, __ATOMIC_RELEASE);
}

uint64_t fg_seqlock_read(const uint64_t *slot, uint64_t *destination, size_t count) {
    uint64_t before = __atomic_load_n(&slot[0], __ATOMIC_ACQUIRE);
    if (before & 1) return 0;
    for (size_t index = 0; index < count; index++) {
        destination[index] = __atomic_load_n(&slot[1 + index], __ATOMIC_RELAXED);
    }
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    uint64_t after = __atomic_load_n(&slot[0], __ATOMIC_RELAXED);
    return before == after ? before : 0;
}
