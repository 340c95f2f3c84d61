#pragma once

// What a click leaves behind: a count per (link, UTC day, channel, class). The channel and day
// rules and the counter key's text form live here.

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace refgate::domain {

enum class ClickClass : std::uint8_t;

constexpr std::size_t kMaxChannelLength = 48;

// A click without a (usable) channel tag, and one whose tag is not kept under its own name.
constexpr std::string_view kDirectChannel = "direct";
constexpr std::string_view kOtherChannel = "other";

// The channel of a click, read from its query: the first `src` parameter when it matches
// [a-z0-9][a-z0-9._-]{0,47} (taken verbatim: anything percent-encoded is no tag), "direct" when
// there is none or it does not match, and "other" (`identifier` set) when it looks like an e-mail
// address or an identifier of a person (looks_like_identifier()): a count per subscriber would be
// a record of that person. The one place where channel tags are checked.
struct ChannelTag {
    std::string_view channel;
    bool identifier = false;
};
ChannelTag read_channel(std::string_view raw_query);
std::string_view channel_of(std::string_view raw_query);  // read_channel(raw_query).channel
bool valid_channel(std::string_view channel);
// Whether a `src` value is one read_channel() counts as itself (valid, and not an identifier that
// it counts as "other"): what a link made for a channel (a snippet, a QR code) may carry.
bool counted_channel(std::string_view src);
// What a refused `src` is told (the APIs' field error).
constexpr std::string_view kCountedChannelRule =
    "must match [a-z0-9][a-z0-9._-]{0,47} and not look like an identifier, as /go/ links count it";

// Whether a raw `src` value looks like an e-mail address or an identifier rather than a channel:
//  - it holds '@' or "%40": an e-mail address;
//  - it holds 10 or more digits in a row: a phone, customer or account number, a timestamp;
//  - one of its pieces (the runs between '.', '_' and '-') is 16 or more characters long and
//    mixes letters and digits: a hex, base32 or base36 identifier or token;
//  - one of its pieces is 24 or more characters long, whatever it holds;
//  - it holds a UUID: hex pieces of 8, 4, 4, 4 and 12 characters joined by '-'.
// Channels such as "newsletter-2026-48", "blog", "nl.2026-12-04" or "spring26-ig2" pass. A
// publisher can still template a value per subscriber that none of this catches; the per-link
// daily cap on channels bounds what that can record (README, "Counting clicks").
bool looks_like_identifier(std::string_view value);

// Days since 1970-01-01 (UTC) and back.
std::int32_t utc_day(std::int64_t unix_seconds);
std::string format_day(std::int32_t day);  // "2026-11-29"
constexpr std::size_t kDayLength = 10;
void format_day(std::int32_t day, char (&out)[kDayLength]);  // the same, without allocating

// Where a click on a link with rules went: the reader's country and the rule that answered.
// (Trivial, without member initialisers, so that it can share the channel's place in a key.)
struct TargetDimension {
    std::array<char, 2> country;  // two upper-case letters; "XX": unknown
    std::uint16_t rule;           // the rule's index + 1; 0: the link's own destination
    std::uint16_t branch;         // the split's branch + 1; 0: not a split
    bool operator==(const TargetDimension&) const = default;
};

// A counter: a link's clicks of one class on one UTC day, either in a channel or, a targeting
// counter, by target (country and rule). Its text form (field()) is what Redis buckets and spill
// files hold; a targeting counter's target is written in the channel's place as "@DE:4.2", a
// form no channel can take, so both kinds travel the same way.
struct CounterKey {
    std::int64_t link_id = 0;
    std::int32_t day = 0;
    std::uint8_t click_class = 0;
    std::uint8_t channel_length = 0;  // 0 for a targeting counter
    bool targeting_counter = false;
    union {
        std::array<char, kMaxChannelLength> channel{};  // a channel counter's
        TargetDimension target;                         // a targeting counter's
    };

    CounterKey() = default;
    CounterKey(std::int64_t link, std::int32_t d, ClickClass cls, std::string_view ch);
    // A targeting counter: country "DE" ("XX" or anything else not two upper-case letters:
    // unknown), rule 4 (0: the link's own destination), its split's branch 2 (0: not a split).
    static CounterKey targeting(std::int64_t link, std::int32_t d, ClickClass cls,
                                std::string_view country, unsigned rule, unsigned branch);

    bool is_targeting() const { return targeting_counter; }
    // Of a channel counter (empty for a targeting one).
    std::string_view channel_view() const {
        return targeting_counter ? std::string_view{}
                                 : std::string_view{channel.data(), channel_length};
    }
    // Of a targeting counter: the country ("DE", "XX"), the rule as text ("0", "3", "4.2").
    std::string_view target_country() const { return {target.country.data(), 2}; }
    std::string target_rule() const;
    const TargetDimension& target_dimension() const { return target; }

    bool operator==(const CounterKey& other) const {
        if (link_id != other.link_id || day != other.day || click_class != other.click_class ||
            targeting_counter != other.targeting_counter)
            return false;
        return targeting_counter ? target == other.target : channel_view() == other.channel_view();
    }
    // "42|2026-11-29|newsletter|human", "42|2026-11-29|@DE:4.2|human": the field name in Redis.
    std::string field() const;
    // The same into `out` (at least kMaxFieldLength bytes), without allocating; returns its length.
    static constexpr std::size_t kMaxFieldLength =
        20 + 1 + kDayLength + 1 + kMaxChannelLength + 1 + 8;
    std::size_t write_field(char* out) const;
    static bool parse_field(std::string_view field, CounterKey& out);
};
// One cache line: the shard probes keys by the million (the targeting dimension shares the
// channel's storage to keep it so).
static_assert(sizeof(CounterKey) == 64);

struct CounterKeyHash {
    // Called on every redirect: channels are short, so a byte loop beats a call into the
    // library's general string hash; the final mix spreads the bits over the whole word.
    std::size_t operator()(const CounterKey& k) const noexcept {
        std::uint64_t h = static_cast<std::uint64_t>(k.link_id) * 0x9e3779b97f4a7c15ULL;
        h ^= (static_cast<std::uint64_t>(static_cast<std::uint32_t>(k.day)) << 8) | k.click_class;
        if (k.is_targeting()) {
            const TargetDimension& t = k.target_dimension();
            h ^= (std::uint64_t{1} << 63) | (std::uint64_t(std::uint8_t(t.country[0])) << 48) |
                 (std::uint64_t(std::uint8_t(t.country[1])) << 40) | (std::uint64_t(t.rule) << 16) |
                 t.branch;
            h *= 0x100000001b3ULL;
        }
        for (char c : k.channel_view()) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
        h ^= h >> 33;
        h *= 0xff51afd7ed558ccdULL;
        h ^= h >> 33;
        return static_cast<std::size_t>(h);
    }
};

}  // namespace refgate::domain
