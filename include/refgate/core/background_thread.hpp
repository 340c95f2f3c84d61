#pragma once

// Background work (the click sender, the flusher, the snapshot follower) shares the CPUs with the
// I/O threads that answer redirects. Called first thing on such a thread, this names it (for top,
// perf and ps) and asks the kernel to let it yield to the I/O threads: SCHED_BATCH (a woken
// background thread does not preempt a running I/O thread) and nice 10 (a tenth of an I/O
// thread's share when both want a CPU). Its work still gets done: nothing waits on it but itself.
// Failures are ignored; the thread then simply runs as before.

namespace refgate {

void become_background_thread(const char* name);  // name: at most 15 characters

}  // namespace refgate
