#pragma once

// How `serve` meets signals: SIGTERM, SIGINT and SIGQUIT stop it gracefully, SIGHUP reloads the
// snapshot. They are blocked in every thread and taken by sigwait() on the main thread only.

#include <signal.h>

#include <chrono>
#include <functional>

#include "refgate/runtime/health_state.hpp"

namespace refgate::app {

// Blocks the handled signals in the calling thread (call it before any thread starts, so that
// every thread inherits the mask) and ignores SIGPIPE. Returns the set for the waits below.
sigset_t block_stop_signals();

const char* signal_name(int signal);

// Waits for a stop signal and returns it; every SIGHUP meanwhile calls `reload`.
int wait_for_stop(const sigset_t& signals, const std::function<void()>& reload);

// From the first stop signal, /readyz answers 503 while the listeners keep serving for
// `duration`, so that load balancers stop sending new connections before the listeners close. A
// second stop signal ends the wait early; a SIGHUP meanwhile still reloads.
void drain(const sigset_t& signals, runtime::HealthState& health,
           const std::function<void()>& reload, std::chrono::milliseconds duration);

}  // namespace refgate::app
