/*
 * alloccount.so: counts a process's heap allocations, for the profile phase of
 * scripts/bench.py (allocations per request).
 *
 *   cc -O2 -shared -fPIC -o alloccount.so scripts/profile/alloccount.c
 *   ALLOCCOUNT_FILE=/tmp/counts LD_PRELOAD=./alloccount.so some-server ...
 *
 * Every malloc, calloc, realloc, posix_memalign, aligned_alloc, memalign, valloc and free
 * is passed to glibc's own implementation (__libc_malloc and friends, so no dlsym and no
 * recursion) after one relaxed atomic increment. The counters live in ALLOCCOUNT_FILE,
 * mapped shared: a reader sees them while the process runs (read them before and after a
 * measurement and subtract), and children forked after start-up (nginx's workers) add to
 * the same counters. The file holds four little-endian uint64: allocation calls (realloc
 * included), reallocs, frees of non-NULL pointers, bytes requested.
 *
 * Allocations made before the constructor runs (the dynamic loader's) are counted in a
 * private fallback and not in the file; they happen once, at start-up.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void __libc_free(void *pointer);

struct counters {
    uint64_t allocations;
    uint64_t reallocations;
    uint64_t frees;
    uint64_t bytes;
};

static struct counters fallback;
static struct counters *counters = &fallback;

__attribute__((constructor)) static void map_counters(void) {
    const char *path = getenv("ALLOCCOUNT_FILE");
    if (path == NULL) return;
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return;
    if (ftruncate(fd, sizeof(struct counters)) == 0) {
        void *mapped = mmap(NULL, sizeof(struct counters), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (mapped != MAP_FAILED) counters = mapped;
    }
    close(fd);
}

static inline void count(size_t size) {
    __atomic_fetch_add(&counters->allocations, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&counters->bytes, size, __ATOMIC_RELAXED);
}

void *malloc(size_t size) {
    count(size);
    return __libc_malloc(size);
}

void *calloc(size_t count_, size_t size) {
    count(count_ * size);
    return __libc_calloc(count_, size);
}

void *realloc(void *pointer, size_t size) {
    count(size);
    __atomic_fetch_add(&counters->reallocations, 1, __ATOMIC_RELAXED);
    return __libc_realloc(pointer, size);
}

void free(void *pointer) {
    if (pointer != NULL) __atomic_fetch_add(&counters->frees, 1, __ATOMIC_RELAXED);
    __libc_free(pointer);
}

void *memalign(size_t alignment, size_t size) {
    count(size);
    return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    count(size);
    return __libc_memalign(alignment, size);
}

int posix_memalign(void **result, size_t alignment, size_t size) {
    if (alignment < sizeof(void *) || (alignment & (alignment - 1)) != 0) return EINVAL;
    count(size);
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL && size != 0) return ENOMEM;
    *result = pointer;
    return 0;
}

void *valloc(size_t size) {
    count(size);
    return __libc_memalign((size_t)sysconf(_SC_PAGESIZE), size);
}
