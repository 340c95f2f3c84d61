#pragma once

// Lock-free figures that the data plane and the workers keep: relaxed atomics, no allocation and
// no lock when one changes. metrics exports them; runtime's HealthState and the modules' own
// stats hold them.

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <tuple>

namespace refgate::runtime {

// Upper bounds (seconds) of a histogram's buckets; every histogram has 16 and +Inf.
using HistogramBounds = std::array<double, 16>;

// Request and round-trip latencies: tens of microseconds to a second.
inline constexpr HistogramBounds kLatencyBounds = {
    0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025,
    0.005,   0.01,     0.025,   0.05,   0.1,     0.25,   0.5,   1.0};

// Flush rounds: usually 0.5-1 s, and up to a minute while PostgreSQL is slow or a backlog drains.
inline constexpr HistogramBounds kFlushDurationBounds = {
    0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.5, 5.0, 10.0, 15.0, 30.0, 45.0, 60.0};

// Who changes a figure: only the thread that owns it, or other threads too.
enum class Writers : std::uint8_t { one, several };

// Adds `n` to a figure. With one writer a load and a store do (a reader still sees whole values)
// without the locked add, which also waits for every earlier store of the thread to reach the
// cache: on the redirect path, the whole answer just written.
inline void add_to_figure(std::atomic<std::uint64_t>& figure, std::uint64_t n,
                          Writers writers) noexcept {
    if (writers == Writers::one) {
        figure.store(figure.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
    } else {
        figure.fetch_add(n, std::memory_order_relaxed);
    }
}

// A histogram with fixed bounds (kLatencyBounds unless given); observe() from any thread (with
// Writers::one, from its owner only).
class LatencyHistogram {
  public:
    static constexpr std::size_t kBuckets = std::tuple_size_v<HistogramBounds> + 1;  // +Inf last

    LatencyHistogram() noexcept : LatencyHistogram(kLatencyBounds) {}
    // `bounds` must outlive the histogram (the constants above do).
    explicit LatencyHistogram(const HistogramBounds& bounds) noexcept : bounds_(&bounds) {
        for (std::size_t i = 0; i < bounds.size(); ++i)
            bounds_ns_[i] = static_cast<std::uint64_t>(bounds[i] * 1e9 + 0.5);
    }

    void observe(std::chrono::nanoseconds elapsed, Writers writers = Writers::several) noexcept {
        auto ns =
            elapsed.count() < 0 ? std::uint64_t{0} : static_cast<std::uint64_t>(elapsed.count());
        add_to_figure(counts_[bucket_of(ns)], 1, writers);
        add_to_figure(sum_ns_, ns, writers);
    }
    // Adds this histogram's figures to non-cumulative bucket counts and a sum in seconds.
    void add_to(std::array<std::uint64_t, kBuckets>& counts, double& sum_seconds) const noexcept {
        for (std::size_t i = 0; i < kBuckets; ++i)
            counts[i] += counts_[i].load(std::memory_order_relaxed);
        sum_seconds += static_cast<double>(sum_ns_.load(std::memory_order_relaxed)) / 1e9;
    }
    const HistogramBounds& bounds() const noexcept { return *bounds_; }
    std::size_t bucket_of(std::uint64_t ns) const noexcept {
        for (std::size_t i = 0; i < bounds_ns_.size(); ++i) {
            if (ns <= bounds_ns_[i]) return i;
        }
        return bounds_ns_.size();
    }

  private:
    const HistogramBounds* bounds_;
    std::array<std::uint64_t, std::tuple_size_v<HistogramBounds>> bounds_ns_{};
    std::array<std::atomic<std::uint64_t>, kBuckets> counts_{};
    std::atomic<std::uint64_t> sum_ns_{0};
};

}  // namespace refgate::runtime
