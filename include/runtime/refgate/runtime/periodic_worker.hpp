#pragma once

// The one loop of every background worker (the click sender, the flusher, the snapshot follower):
// a thread of its own at a background priority that runs rounds, waits an interval after a round
// that succeeded and backs off after one that failed, wakes early on request and stops promptly.

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "refgate/runtime/background_thread.hpp"

namespace refgate::runtime {

enum class RoundOutcome { done, failed };

struct PeriodicWorkerOptions {
    const char* name = "rg-worker";  // the thread's name, at most 15 characters
    BackgroundPriority priority = BackgroundPriority::idle;
    std::chrono::milliseconds interval{1'000};  // the wait after a round that succeeded
    // The wait after a failed round: min_backoff, doubled after each further failure up to
    // max_backoff, and back to `interval` after the next success.
    std::chrono::milliseconds min_backoff{1'000};
    std::chrono::milliseconds max_backoff{1'000};
    bool first_round_at_once = true;  // otherwise the first round waits an interval
    // While backing off, the idle duty (if any) runs this often: memory-only work that must go on
    // while a dependency is away. Zero: none.
    std::chrono::milliseconds idle_tick{0};
};

// The waits between rounds, apart from any thread: what the worker sleeps after each outcome.
class RoundPacing {
  public:
    explicit RoundPacing(const PeriodicWorkerOptions& options) : options_(options) {}
    std::chrono::milliseconds after(RoundOutcome outcome);

  private:
    const PeriodicWorkerOptions& options_;
    std::chrono::milliseconds backoff_{0};  // zero: the last round succeeded
};

class PeriodicWorker {
  public:
    using Round = std::function<RoundOutcome()>;
    using Idle = std::function<void()>;

    PeriodicWorker(PeriodicWorkerOptions options, Round round, Idle idle = {});
    ~PeriodicWorker();
    PeriodicWorker(const PeriodicWorker&) = delete;
    PeriodicWorker& operator=(const PeriodicWorker&) = delete;

    void start();
    // Ends the current wait at once (a round in progress finishes first) and joins the thread.
    // Safe to call twice, and without start().
    void stop();
    // The next round starts now instead of at the end of the current wait.
    void wake();

  private:
    void run();
    // Waits `duration` (running the idle duty every idle_tick when `idle`); false when stopping.
    bool wait(std::chrono::milliseconds duration, bool idle);

    PeriodicWorkerOptions options_;
    Round round_;
    Idle idle_;
    std::mutex mutex_;
    std::condition_variable wake_;
    bool stopping_ = false;
    bool woken_ = false;
    std::thread thread_;
};

}  // namespace refgate::runtime
