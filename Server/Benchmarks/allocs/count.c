// Counts the heap allocations of a process: LD_PRELOAD it, send SIGUSR2, read the counters.
//
// Part of Tessera's allocation benchmark (Server/Benchmarks/allocs/allocs.py). Every malloc, calloc,
// realloc, posix_memalign and aligned_alloc is counted (with the bytes asked for) and passed on to
// the C library's allocator; SIGUSR2 appends one line of counters to the file named by
// TESSERA_ALLOCS_OUT. A count of allocations per request does not drift with the machine's load as
// a timing does, so two builds can be compared on a busy machine.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static atomic_ulong allocations, frees, bytes;
static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static int (*real_posix_memalign)(void **, size_t, size_t);
static void *(*real_aligned_alloc)(size_t, size_t);
static void (*real_free)(void *);

// dlsym itself may allocate before the real allocator is known: served from here, never freed.
static _Alignas(16) char bootstrap[65536];
static atomic_size_t bootstrap_used;

static int resolving;

static void resolve(void) {
    if (resolving) return;
    resolving = 1;
    real_malloc = dlsym(RTLD_NEXT, "malloc");
    real_calloc = dlsym(RTLD_NEXT, "calloc");
    real_realloc = dlsym(RTLD_NEXT, "realloc");
    real_posix_memalign = dlsym(RTLD_NEXT, "posix_memalign");
    real_aligned_alloc = dlsym(RTLD_NEXT, "aligned_alloc");
    real_free = dlsym(RTLD_NEXT, "free");
    resolving = 0;
}

static int in_bootstrap(const void *pointer) {
    return (const char *)pointer >= bootstrap && (const char *)pointer < bootstrap + sizeof bootstrap;
}

static void report(int signal_number) {
    (void)signal_number;
    char line[160];
    int length = snprintf(line, sizeof line, "allocations=%lu frees=%lu bytes=%lu\n", atomic_load(&allocations),
                          atomic_load(&frees), atomic_load(&bytes));
    const char *path = getenv("TESSERA_ALLOCS_OUT");
    int descriptor = path ? open(path, O_WRONLY | O_CREAT | O_APPEND, 0644) : 2;
    if (descriptor >= 0 && length > 0) {
        ssize_t written = write(descriptor, line, (size_t)length);
        (void)written;
    }
    if (path && descriptor >= 0) close(descriptor);
}

__attribute__((constructor)) static void start(void) {
    resolve();
    signal(SIGUSR2, report);
}

static void count(size_t size) {
    atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&bytes, size, memory_order_relaxed);
}

void *malloc(size_t size) {
    if (!real_malloc) resolve();
    if (!real_malloc) {
        size_t rounded = (size + 15) & ~(size_t)15;
        size_t offset = atomic_fetch_add(&bootstrap_used, rounded);
        return offset + rounded <= sizeof bootstrap ? bootstrap + offset : NULL;
    }
    count(size);
    return real_malloc(size);
}

void *calloc(size_t number, size_t size) {
    if (!real_calloc) {
        void *pointer = malloc(number * size);
        if (pointer) memset(pointer, 0, number * size);
        return pointer;
    }
    count(number * size);
    return real_calloc(number, size);
}

void *realloc(void *pointer, size_t size) {
    if (!real_realloc) resolve();
    if (in_bootstrap(pointer)) {  // never the C library's: move it out (the old size is not known)
        void *moved = malloc(size);
        size_t available = (size_t)(bootstrap + sizeof bootstrap - (char *)pointer);
        if (moved) memcpy(moved, pointer, size < available ? size : available);
        return moved;
    }
    count(size);
    return real_realloc(pointer, size);
}

int posix_memalign(void **pointer, size_t alignment, size_t size) {
    if (!real_posix_memalign) resolve();
    count(size);
    return real_posix_memalign(pointer, alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    if (!real_aligned_alloc) resolve();
    count(size);
    return real_aligned_alloc(alignment, size);
}

void free(void *pointer) {
    if (!pointer) return;
    if (in_bootstrap(pointer)) return;
    if (!real_free) resolve();
    atomic_fetch_add_explicit(&frees, 1, memory_order_relaxed);
    real_free(pointer);
}
