#pragma once

// A click's unique sample is a keyed hash under a random daily salt that lives only in memory and
// in Redis: nothing here can identify a reader.

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string_view>
#include <utility>

namespace refgate::clicks {

// Keyed 64-bit hash (SipHash-2-4) of a click's (client address, user agent, link) under the day's
// salt. One-way without the salt, and the salt is never written to disk, logs or PostgreSQL.
using SaltKey = std::array<std::uint8_t, 16>;
std::uint64_t siphash24(const SaltKey& key, std::string_view message);
std::uint64_t unique_hash(const SaltKey& salt, const std::array<std::uint8_t, 16>& address,
                          std::string_view user_agent, std::int64_t link_id);
// A client of one channel in the scanner class's burst window, under the same daily salt.
std::uint64_t burst_hash(const SaltKey& salt, const std::array<std::uint8_t, 16>& address,
                         std::string_view channel);

struct Salts {
    std::array<std::pair<std::int32_t, SaltKey>, 2> slots{};  // day 0: empty
    // False when no salt for that day is known yet (the unique sample is skipped).
    bool get(std::int32_t day, SaltKey& out) const {
        for (const auto& [d, key] : slots) {
            if (d == day && d != 0) {
                out = key;
                return true;
            }
        }
        return false;
    }
};

// The daily salts the sender keeps fresh (today's and tomorrow's).
class SaltBox {
  public:
    void set(std::int32_t day, const SaltKey& key);
    Salts current() const;
    std::uint64_t generation() const noexcept {
        return generation_.load(std::memory_order_acquire);
    }

  private:
    mutable std::mutex mutex_;
    Salts salts_;
    std::atomic<std::uint64_t> generation_{0};
};

// A per-thread copy of the salts, refreshed only when they change: no shared lock per click.
class SaltReader {
  public:
    explicit SaltReader(const SaltBox& box) : box_(box) {}
    bool get(std::int32_t day, SaltKey& out) {
        auto generation = box_.generation();
        if (generation != generation_) {
            salts_ = box_.current();
            generation_ = generation;
        }
        return salts_.get(day, out);
    }

  private:
    const SaltBox& box_;
    Salts salts_;
    std::uint64_t generation_ = 0;
};

}  // namespace refgate::clicks
