#ifndef FORMGATE_CEVENTSUPPORT_H
#define FORMGATE_CEVENTSUPPORT_H

/// Sets glibc's malloc thresholds: blocks of `mmap_threshold` bytes and more are mapped one
/// by one; free memory above `trim_threshold` at the top of an arena goes back to the kernel.
/// Returns 0, or -1 when glibc refused either value.
int fg_set_malloc_thresholds(int mmap_threshold, int trim_threshold);

/// Names the calling thread (at most 15 bytes and the NUL); returns 0 or an errno value.
int fg_set_thread_name(const char *name);

#include <stddef.h>
#include <stdint.h>

/// A sequence lock over `words` 64-bit words of shared memory: one thread writes (an event
/// loop), others read without ever stopping it. `slot[0]` is the sequence (odd while a write
/// is under way); the data follows. Every word is accessed atomically (relaxed, with fences),
/// so a reader never sees a torn word, and a read that overlapped a write is detected.

/// Writes `count` words from `source` at data word `offset` of `slot` (one writer only).
void fg_seqlock_write(uint64_t *slot, size_t offset, const uint64_t *source, size_t count);

/// Copies `count` data words of `slot` into `destination`; returns the sequence read (even),
/// or 0 when a write overlapped the read (read again). Sequences start at 2.
uint64_t fg_seqlock_read(const uint64_t *slot, uint64_t *destination, size_t count);

#endif
