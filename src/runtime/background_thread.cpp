#include "refgate/runtime/background_thread.hpp"

#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

// Under AddressSanitizer the heap is the sanitizer's, not glibc's: glibc's arenas may never be
// set up, and mallinfo2 (which GCC 12's sanitizer does not intercept) then walks null pointers
// (a SEGV seen once in the suite, on a periodic worker's first round). The glibc heap calls
// below are skipped there; they tune a heap that such a build does not use.
#if defined(__SANITIZE_ADDRESS__)
#define REFGATE_GLIBC_HEAP 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define REFGATE_GLIBC_HEAP 0
#endif
#endif
#ifndef REFGATE_GLIBC_HEAP
#define REFGATE_GLIBC_HEAP 1
#endif

namespace refgate::runtime {

constexpr int kLowPriorityNice = 10;
constexpr int kMaxNice = 19;

void become_background_thread(const char* name, BackgroundPriority priority) {
    pthread_setname_np(pthread_self(), name);
    sched_param param{};
    param.sched_priority = 0;
    if (priority == BackgroundPriority::idle) {
        pthread_setschedparam(pthread_self(), SCHED_IDLE, &param);
        return;
    }
    pthread_setschedparam(pthread_self(), SCHED_BATCH, &param);
    // On Linux the nice value belongs to the thread, not the process (see setpriority(2)), and a
    // new thread starts with its creator's. Counted from there: in a process started at nice 19
    // (by a privileged user, who may lower a nice value), nice 10 would put the background
    // thread above the I/O threads.
    auto tid = static_cast<id_t>(gettid());
    errno = 0;
    int own = getpriority(PRIO_PROCESS, tid);
    if (errno != 0) own = 0;
    setpriority(PRIO_PROCESS, tid, std::clamp(own + kLowPriorityNice, kLowPriorityNice, kMaxNice));
}

void release_free_heap([[maybe_unused]] std::size_t threshold) {
#if REFGATE_GLIBC_HEAP
    // mallinfo2 walks the arenas' free lists, as malloc_trim does: a few milliseconds at most,
    // on a background thread.
    if (mallinfo2().fordblks > threshold) malloc_trim(0);
#endif
}

void trim_heap() {
#if REFGATE_GLIBC_HEAP
    malloc_trim(0);
#endif
}

void keep_large_blocks_mapped() {
#if REFGATE_GLIBC_HEAP
    constexpr int kMappedFrom = 256 << 10;
    // Setting either turns the dynamic adjustment of both off (mallopt(3)).
    mallopt(M_MMAP_THRESHOLD, kMappedFrom);
    mallopt(M_TRIM_THRESHOLD, 4 * kMappedFrom);
#endif
}

}  // namespace refgate::runtime
