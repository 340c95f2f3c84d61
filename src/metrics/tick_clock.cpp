#include "refgate/metrics/tick_clock.hpp"

#include <fstream>
#include <string>
#include <thread>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace refgate::metrics {
namespace {

struct Rate {
    bool cycles = false;
    double ns_per_tick = 1.0;
};

#if defined(__x86_64__)
bool kernel_keeps_time_by_tsc() {
    std::ifstream file("/sys/devices/system/clocksource/clocksource0/current_clocksource");
    std::string name;
    return file >> name && name == "tsc";
}

// The counter and steady_clock at one moment: the counter read between two reads of the clock,
// the clock's time their middle. Of a few tries the tightest pair: a thread preempted (or a
// virtual CPU stolen) between two reads would put a gap of its own into the rate, for the life of
// the process.
struct Reading {
    std::chrono::duration<double, std::nano> clock{};
    std::uint64_t ticks = 0;
};

Reading read_both() {
    Reading best;
    auto best_gap = std::chrono::steady_clock::duration::max();
    for (int tries = 0; tries < 8; ++tries) {
        auto before = std::chrono::steady_clock::now();
        std::uint64_t ticks = __rdtsc();
        auto after = std::chrono::steady_clock::now();
        if (after - before >= best_gap) continue;
        best_gap = after - before;
        best.clock = before.time_since_epoch() +
                     std::chrono::duration<double, std::nano>(after - before) / 2;
        best.ticks = ticks;
    }
    return best;
}

Rate measure_rate() {
    if (!kernel_keeps_time_by_tsc()) return {};
    // Off by the pairs' gaps (tens of nanoseconds) in 2 ms: a few thousandths of a percent.
    Reading start = read_both();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    Reading end = read_both();
    if (end.ticks <= start.ticks || end.clock <= start.clock) return {};
    return {true, (end.clock - start.clock).count() / static_cast<double>(end.ticks - start.ticks)};
}
#else
Rate measure_rate() { return {}; }
#endif

const Rate& rate() {
    static const Rate measured = measure_rate();
    return measured;
}

}  // namespace

TickClock::TickClock() noexcept : cycles_(rate().cycles), ns_per_tick_(rate().ns_per_tick) {}

std::uint64_t TickClock::now() const noexcept {
#if defined(__x86_64__)
    if (cycles_) return __rdtsc();
#endif
    return static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
}

std::chrono::nanoseconds TickClock::since(std::uint64_t start) const noexcept {
    std::uint64_t end = now();
    if (end <= start) return std::chrono::nanoseconds{0};
    if (!cycles_) return std::chrono::nanoseconds{static_cast<std::int64_t>(end - start)};
    return std::chrono::nanoseconds{
        static_cast<std::int64_t>(static_cast<double>(end - start) * ns_per_tick_)};
}

}  // namespace refgate::metrics
