#include "signals.hpp"

#include <pthread.h>

#include <csignal>
#include <ctime>

#include "refgate/runtime/log.hpp"

namespace refgate::app {

sigset_t block_stop_signals() {
    // A signal that is not blocked here would end the process at once, losing the clicks still
    // in memory.
    sigset_t set;
    sigemptyset(&set);
    for (int signal : {SIGINT, SIGTERM, SIGQUIT, SIGHUP}) sigaddset(&set, signal);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
    std::signal(SIGPIPE, SIG_IGN);
    return set;
}

const char* signal_name(int signal) {
    switch (signal) {
        case SIGINT:
            return "SIGINT";
        case SIGTERM:
            return "SIGTERM";
        case SIGQUIT:
            return "SIGQUIT";
        case SIGHUP:
            return "SIGHUP";
        default:
            return "unknown";
    }
}

int wait_for_stop(const sigset_t& signals, const std::function<void()>& reload) {
    for (;;) {
        int signal = 0;
        if (sigwait(&signals, &signal) != 0) continue;
        if (signal != SIGHUP) return signal;
        runtime::log::info("reload_requested", {{"signal", "SIGHUP"}});
        reload();
    }
}

void drain(const sigset_t& signals, runtime::HealthState& health,
           const std::function<void()>& reload, std::chrono::milliseconds duration) {
    health.draining.store(true);
    if (duration.count() == 0) return;
    runtime::log::info("draining", {{"drain_ms", duration.count()}});
    auto deadline = std::chrono::steady_clock::now() + duration;
    for (;;) {
        auto left = deadline - std::chrono::steady_clock::now();
        if (left <= std::chrono::nanoseconds::zero()) break;
        auto seconds = std::chrono::duration_cast<std::chrono::seconds>(left);
        timespec wait{
            .tv_sec = static_cast<time_t>(seconds.count()),
            .tv_nsec = static_cast<long>(
                std::chrono::duration_cast<std::chrono::nanoseconds>(left - seconds).count())};
        int signal = sigtimedwait(&signals, nullptr, &wait);
        if (signal < 0) continue;  // EAGAIN (time is up, checked above) or EINTR
        if (signal == SIGHUP) {
            reload();
            continue;
        }
        runtime::log::info("drain_cut_short", {{"signal", signal_name(signal)}});
        return;
    }
    runtime::log::info("drained");
}

}  // namespace refgate::app
