#include "refgate/runtime/periodic_worker.hpp"

#include <algorithm>

namespace refgate::runtime {

std::chrono::milliseconds RoundPacing::after(RoundOutcome outcome) {
    if (outcome == RoundOutcome::done) {
        backoff_ = std::chrono::milliseconds{0};
        return options_.interval;
    }
    backoff_ =
        backoff_.count() == 0 ? options_.min_backoff : std::min(backoff_ * 2, options_.max_backoff);
    return backoff_;
}

PeriodicWorker::PeriodicWorker(PeriodicWorkerOptions options, Round round, Idle idle)
    : options_(options), round_(std::move(round)), idle_(std::move(idle)) {}

PeriodicWorker::~PeriodicWorker() { stop(); }

void PeriodicWorker::start() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = false;
    }
    thread_ = std::thread([this] {
        become_background_thread(options_.name, options_.priority);
        run();
    });
}

void PeriodicWorker::stop() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
}

void PeriodicWorker::wake() {
    {
        std::lock_guard lock(mutex_);
        woken_ = true;
    }
    wake_.notify_all();
}

void PeriodicWorker::run() {
    RoundPacing pacing(options_);
    if (!options_.first_round_at_once && !wait(options_.interval, false)) return;
    for (;;) {
        RoundOutcome outcome = round_();
        release_free_heap();
        bool backing_off = outcome == RoundOutcome::failed;
        if (!wait(pacing.after(outcome), backing_off && idle_)) return;
    }
}

bool PeriodicWorker::wait(std::chrono::milliseconds duration, bool idle) {
    auto until = std::chrono::steady_clock::now() + duration;
    std::unique_lock lock(mutex_);
    for (;;) {
        auto step_end = until;
        if (idle && options_.idle_tick.count() > 0)
            step_end = std::min(until, std::chrono::steady_clock::now() + options_.idle_tick);
        wake_.wait_until(lock, step_end, [this] { return stopping_ || woken_; });
        if (stopping_) return false;
        if (woken_ || std::chrono::steady_clock::now() >= until) {
            woken_ = false;
            return true;
        }
        lock.unlock();
        idle_();
        lock.lock();
    }
}

}  // namespace refgate::runtime
