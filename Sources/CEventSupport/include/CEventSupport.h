#ifndef FORMGATE_CEVENTSUPPORT_H
#define FORMGATE_CEVENTSUPPORT_H

/// Sets glibc's malloc thresholds: blocks of `mmap_threshold` bytes and more are mapped one
/// by one; free memory above `trim_threshold` at the top of an arena goes back to the kernel.
/// Returns 0, or -1 when glibc refused either value.
int fg_set_malloc_thresholds(int mmap_threshold, int trim_threshold);

/// Names the calling thread (at most 15 bytes and the NUL); returns 0 or an errno value.
int fg_set_thread_name(const char *name);

#endif
