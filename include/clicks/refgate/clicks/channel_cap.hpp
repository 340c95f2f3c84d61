#pragma once

// The per-link, per-day cap on distinct channels (REFGATE_MAX_CHANNELS_PER_LINK_DAY): past it a
// click counts under the channel "other", never dropped. It holds in two places (see
// docs/architecture.md, "Counting clicks"): each I/O thread's ChannelCap keeps what one client can
// make it remember (and send to Redis) bounded, and the flusher folds what the whole fleet sent
// past the cap into "other" in the transaction that applies a bucket (fold_channels()), so the
// rows in PostgreSQL stay within it and a bucket applied once is folded once.

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "refgate/domain/counter_key.hpp"

namespace refgate::clicks {

// Whether a channel counts against the cap: every one but "direct" and "other".
bool capped_channel(std::string_view channel);

// One I/O thread's memory of the channels it counted per link on the current and the previous UTC
// day. Not thread-safe (one per recorder). Steady traffic allocates nothing: the tables grow only
// when more distinct (link, channel) pairs arrive than ever before that day, and never past a
// fixed bound, beyond which new channels count as "other" too.
class ChannelCap {
  public:
    explicit ChannelCap(std::size_t cap);

    struct Admitted {
        std::string_view channel;  // the one asked for, or "other"
        bool capped = false;       // "other" because of the cap (or the tables' bound)
    };
    // The channel a click on `link_id` on `day` with channel `channel` counts under.
    Admitted admit(std::int64_t link_id, std::int32_t day, std::string_view channel);

    std::size_t cap() const { return cap_; }

    // The tables' bounds: channel fingerprints and links per day (powers of two).
    static constexpr std::size_t kMinSlots = 1'024;
    static constexpr std::size_t kMaxChannelSlots = std::size_t{1} << 20;  // 8 MiB a day
    static constexpr std::size_t kMaxLinkSlots = std::size_t{1} << 17;     // 2 MiB a day

  private:
    struct LinkSlot {
        std::int64_t link_id = 0;
        std::uint32_t channels = 0;
        bool used = false;
    };
    struct Day {
        std::int32_t day = 0;
        bool valid = false;
        std::vector<std::uint64_t> channels;  // fingerprints of (link, channel); 0: empty
        std::size_t channels_used = 0;
        std::vector<LinkSlot> links;
        std::size_t links_used = 0;
    };
    Day* day_for(std::int32_t day);
    static void reset(Day& d, std::int32_t day);
    // The slot of `link_id`, added when missing; null when the table is at its bound.
    static LinkSlot* link_slot(Day& d, std::int64_t link_id);
    // Whether `fp` is known; with `insert`, added when it is not (false when at the bound).
    static bool find_channel(Day& d, std::uint64_t fp);
    static bool insert_channel(Day& d, std::uint64_t fp);

    std::size_t cap_;
    Day days_[2];
    std::size_t current_ = 0;
};

// The flusher's side. Counts as a bucket holds them (channel counters only, targeting counters
// are left alone by every function here).
using ChannelCounts = std::vector<std::pair<domain::CounterKey, std::uint64_t>>;
using LinkAndDay = std::pair<std::int64_t, std::int32_t>;
using StoredChannel = std::tuple<std::int64_t, std::int32_t, std::string>;

// The (link, day) pairs of `counts` that hold a capped channel, sorted, each once.
std::vector<LinkAndDay> channel_link_days(const ChannelCounts& counts);

// The (link, day, channel) of `counts` whose (link, day) may pass the cap: its stored channels
// (`stored`, a count per pair; missing is 0) and the distinct capped channels of `counts` make
// more than `cap`. Only for these must the store say which are stored already. Sorted, each once.
std::vector<StoredChannel> channels_to_check(const ChannelCounts& counts, std::size_t cap,
                                             const std::map<LinkAndDay, std::size_t>& stored);

struct ChannelFold {
    std::uint64_t clicks = 0;  // clicks moved to "other"
    std::size_t channels = 0;  // distinct (link, day, channel) moved
};
// Moves to "other" the counters of channels that would take their (link, day) past `cap`
// distinct capped channels: channels already stored (`known`, from channels_to_check()) keep
// their rows; the new ones take what room is left, most clicks first (then by name), and the rest
// count as "other". The same counts and store always give the same answer, so a transaction that
// is retried folds the same way. Totals are unchanged.
ChannelFold fold_channels(ChannelCounts& counts, std::size_t cap,
                          const std::map<LinkAndDay, std::size_t>& stored,
                          const std::set<StoredChannel>& known);

}  // namespace refgate::clicks
