#pragma once

// Background work (the click sender, the flusher, the snapshot follower) shares the CPUs with the
// I/O threads that answer redirects. Called first thing on such a thread, become_background_thread
// names it (for top, perf and ps) and asks the kernel to let the I/O threads go first. Failures are
// ignored; the thread then simply runs as before.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <thread>

namespace refgate::runtime {

enum class BackgroundPriority {
    // SCHED_BATCH at nice 10 (10 above the nice the thread started with, at most 19): a woken
    // thread does not preempt a running I/O thread and gets a tenth of its share while both want
    // the CPU. For work with a deadline (the snapshot must follow the database within a second)
    // and the server's blocking pool (postbacks, the admin API).
    low,
    // SCHED_IDLE: runs on CPU time no other thread wants, and a waking I/O thread takes the CPU
    // back at once. For work that may wait while the machine is saturated (counts wait in memory
    // or in Redis, nothing is lost). Linux lets an unprivileged thread enter this class but not
    // leave it, so work that must finish at shutdown belongs on another thread.
    idle,
};

void become_background_thread(const char* name,  // at most 15 characters
                              BackgroundPriority priority);

// Background work builds large transient structures (a flush's arrays and replies, a send
// round's batch lines, a snapshot being built, a link-check plan) on its thread's malloc arena,
// and glibc keeps the freed pages of an arena resident: at 100,000 links such rounds left about
// 70 MiB behind. When more than `threshold` bytes lie free in the arenas, the free pages are given
// back (malloc_trim). The redirect path allocates nothing, so it never waits on the arena locks
// this takes; called after every background round.
void release_free_heap(std::size_t threshold = std::size_t{4} << 20);

// Gives every arena's free pages back now (malloc_trim), whatever lies free: after a one-off
// build of a large structure (a snapshot, the country or ASN ranges) or many freed connections.
// In a sanitizer build, whose heap is not glibc's, this and the two functions around it do
// nothing (background_thread.cpp).
void trim_heap();

// glibc raises its mmap threshold to the size of the largest block freed so far (up to 32 MiB);
// from then on large transient blocks (a snapshot being built, a flush's arrays, libpq's result
// buffers) come from the arenas, whose top pages release_free_heap cannot give back. Called once
// at the start of serve: blocks of 256 KiB and more keep mappings of their own, unmapped when
// freed. The redirect path allocates nothing, so it never pays the system calls.
void keep_large_blocks_mapped();

// For long loops on a background thread (over a window's counters, a bucket's lines): step() once
// per item offers the CPU to any waiting thread (sched_yield) once the loop has run kSlice since it
// last did. The kernel lets a thread it picked run until the next timer tick (up to 4 ms), even one
// of the priorities above, and an I/O thread held off its CPU that long delays every connection it
// serves. The clock is read every kStepsPerSlice items: an item costs from tens of nanoseconds (a
// unique sample looked up) to microseconds (a counter written out), and a yield every few hundred
// cheap items was a percent of all CPU time at 100k redirects/s.
class CpuSlicer {
  public:
    static constexpr std::uint32_t kStepsPerSlice = 256;
    static constexpr std::chrono::microseconds kSlice{50};
    void step(std::uint32_t items = 1) {
        steps_ += items;
        if (steps_ < kStepsPerSlice) return;
        steps_ = 0;
        if (std::chrono::steady_clock::now() - since_ < kSlice) return;
        std::this_thread::yield();
        since_ = std::chrono::steady_clock::now();
    }

  private:
    std::uint32_t steps_ = 0;
    std::chrono::steady_clock::time_point since_ = std::chrono::steady_clock::now();
};

}  // namespace refgate::runtime
