#pragma once

// What a click leaves behind: a count per (link, UTC day, channel, class). The channel and day
// rules and the counter key's text form live here.

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace refgate {

enum class ClickClass : std::uint8_t;

constexpr std::size_t kMaxChannelLength = 48;

// The channel of a click: the `src` query parameter when it matches [a-z0-9][a-z0-9._-]{0,47},
// otherwise "direct". The one place where channel tags are checked.
std::string_view channel_of(std::string_view raw_query);
bool valid_channel(std::string_view channel);

// Days since 1970-01-01 (UTC) and back.
std::int32_t utc_day(std::int64_t unix_seconds);
std::string format_day(std::int32_t day);  // "2026-11-29"
constexpr std::size_t kDayLength = 10;
void format_day(std::int32_t day, char (&out)[kDayLength]);  // the same, without allocating

struct CounterKey {
    std::int64_t link_id = 0;
    std::int32_t day = 0;
    std::uint8_t click_class = 0;
    std::uint8_t channel_length = 0;
    std::array<char, kMaxChannelLength> channel{};

    CounterKey() = default;
    CounterKey(std::int64_t link, std::int32_t d, ClickClass cls, std::string_view ch);
    std::string_view channel_view() const { return {channel.data(), channel_length}; }
    // A targeting counter: the click by country and by the rule that answered, e.g. "@DE:4.2"
    // (country DE, rule 4, its split's branch 2; "@XX:0": country unknown, the link's own
    // destination). It lives in the channel's place with a mark no channel can start with, so it
    // travels through the shards, Redis buckets and spill files like any counter.
    static CounterKey targeting(std::int64_t link, std::int32_t d, ClickClass cls,
                                std::string_view country, unsigned rule, unsigned branch);
    bool is_targeting() const { return channel_length > 0 && channel[0] == '@'; }
    // Of a targeting counter: the country ("DE", "XX") and the rule ("0", "3", "4.2").
    std::string_view target_country() const { return {channel.data() + 1, 2}; }
    std::string_view target_rule() const { return channel_view().substr(4); }
    bool operator==(const CounterKey& other) const {
        return link_id == other.link_id && day == other.day && click_class == other.click_class &&
               channel_view() == other.channel_view();
    }
    // "42|2026-11-29|newsletter|human": the field name in Redis.
    std::string field() const;
    // The same into `out` (at least kMaxFieldLength bytes), without allocating; returns its length.
    static constexpr std::size_t kMaxFieldLength =
        20 + 1 + kDayLength + 1 + kMaxChannelLength + 1 + 8;
    std::size_t write_field(char* out) const;
    static bool parse_field(std::string_view field, CounterKey& out);
};

struct CounterKeyHash {
    // Called on every redirect: channels are short, so a byte loop beats a call into the
    // library's general string hash; the final mix spreads the bits over the whole word.
    std::size_t operator()(const CounterKey& k) const noexcept {
        std::uint64_t h = static_cast<std::uint64_t>(k.link_id) * 0x9e3779b97f4a7c15ULL;
        h ^= (static_cast<std::uint64_t>(static_cast<std::uint32_t>(k.day)) << 8) | k.click_class;
        for (char c : k.channel_view()) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
        h ^= h >> 33;
        h *= 0xff51afd7ed558ccdULL;
        h ^= h >> 33;
        return static_cast<std::size_t>(h);
    }
};

}  // namespace refgate
