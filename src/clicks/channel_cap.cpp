#include "refgate/clicks/channel_cap.hpp"

#include <algorithm>

namespace refgate::clicks {
namespace {

constexpr std::size_t kMaxLoadNum = 3, kMaxLoadDen = 4;

std::uint64_t mix(std::uint64_t h) {
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h;
}

// A 64-bit fingerprint of (link, channel); never 0, which marks an empty slot. Two channels of a
// link that share one would count as one channel: at 64 bits, not a concern.
std::uint64_t fingerprint(std::int64_t link_id, std::string_view channel) {
    std::uint64_t h = static_cast<std::uint64_t>(link_id) * 0x9e3779b97f4a7c15ULL;
    for (char c : channel) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
    h = mix(h ^ channel.size());
    return h == 0 ? 1 : h;
}

bool full(std::size_t used, std::size_t slots) {
    return (used + 1) * kMaxLoadDen > slots * kMaxLoadNum;
}

}  // namespace

bool capped_channel(std::string_view channel) {
    return channel != domain::kDirectChannel && channel != domain::kOtherChannel;
}

ChannelCap::ChannelCap(std::size_t cap) : cap_(cap) {
    for (Day& d : days_) {
        d.channels.assign(kMinSlots, 0);
        d.links.assign(kMinSlots, LinkSlot{});
    }
}

void ChannelCap::reset(Day& d, std::int32_t day) {
    // The tables keep their size: a busy day's room serves the next one without allocating.
    std::fill(d.channels.begin(), d.channels.end(), 0);
    std::fill(d.links.begin(), d.links.end(), LinkSlot{});
    d.channels_used = d.links_used = 0;
    d.day = day;
    d.valid = true;
}

ChannelCap::Day* ChannelCap::day_for(std::int32_t day) {
    Day& current = days_[current_];
    if (current.valid && current.day == day) return &current;
    Day& previous = days_[1 - current_];
    if (previous.valid && previous.day == day) return &previous;  // a click from just before 0:00
    if (current.valid && day < current.day) return nullptr;       // the clock went back a day
    // A new day: the previous day's tables are reused.
    reset(previous, day);
    current_ = 1 - current_;
    return &previous;
}

ChannelCap::LinkSlot* ChannelCap::link_slot(Day& d, std::int64_t link_id) {
    std::size_t mask = d.links.size() - 1;
    for (std::size_t i = mix(static_cast<std::uint64_t>(link_id)) & mask;; i = (i + 1) & mask) {
        LinkSlot& slot = d.links[i];
        if (slot.used && slot.link_id == link_id) return &slot;
        if (slot.used) continue;
        if (full(d.links_used, d.links.size())) {
            if (d.links.size() >= kMaxLinkSlots) return nullptr;
            std::vector<LinkSlot> old(d.links.size() * 2);
            old.swap(d.links);
            d.links_used = 0;
            for (const LinkSlot& s : old) {
                if (!s.used) continue;
                LinkSlot* moved = link_slot(d, s.link_id);
                moved->channels = s.channels;
            }
            return link_slot(d, link_id);
        }
        slot = LinkSlot{link_id, 0, true};
        ++d.links_used;
        return &slot;
    }
}

bool ChannelCap::find_channel(Day& d, std::uint64_t fp) {
    std::size_t mask = d.channels.size() - 1;
    for (std::size_t i = fp & mask;; i = (i + 1) & mask) {
        if (d.channels[i] == fp) return true;
        if (d.channels[i] == 0) return false;
    }
}

bool ChannelCap::insert_channel(Day& d, std::uint64_t fp) {
    if (full(d.channels_used, d.channels.size())) {
        if (d.channels.size() >= kMaxChannelSlots) return false;
        std::vector<std::uint64_t> old(d.channels.size() * 2, 0);
        old.swap(d.channels);
        d.channels_used = 0;
        for (std::uint64_t f : old) {
            if (f != 0) insert_channel(d, f);
        }
    }
    std::size_t mask = d.channels.size() - 1;
    std::size_t i = fp & mask;
    while (d.channels[i] != 0) i = (i + 1) & mask;
    d.channels[i] = fp;
    ++d.channels_used;
    return true;
}

ChannelCap::Admitted ChannelCap::admit(std::int64_t link_id, std::int32_t day,
                                       std::string_view channel) {
    if (!capped_channel(channel)) return {channel, false};
    Day* d = day_for(day);
    if (d == nullptr) return {domain::kOtherChannel, true};
    std::uint64_t fp = fingerprint(link_id, channel);
    if (find_channel(*d, fp)) return {channel, false};
    LinkSlot* link = link_slot(*d, link_id);
    if (link == nullptr || link->channels >= cap_ || !insert_channel(*d, fp))
        return {domain::kOtherChannel, true};
    ++link->channels;
    return {channel, false};
}

std::vector<LinkAndDay> channel_link_days(const ChannelCounts& counts) {
    std::vector<LinkAndDay> out;
    for (const auto& [key, n] : counts) {
        if (!key.is_targeting() && capped_channel(key.channel_view()))
            out.emplace_back(key.link_id, key.day);
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

namespace {

// The distinct capped channels of `counts` per (link, day), with their clicks (all classes).
std::map<LinkAndDay, std::map<std::string, std::uint64_t>> channels_by_link_day(
    const ChannelCounts& counts) {
    std::map<LinkAndDay, std::map<std::string, std::uint64_t>> out;
    for (const auto& [key, n] : counts) {
        if (key.is_targeting() || !capped_channel(key.channel_view())) continue;
        out[{key.link_id, key.day}][std::string(key.channel_view())] += n;
    }
    return out;
}

std::size_t stored_count(const std::map<LinkAndDay, std::size_t>& stored, const LinkAndDay& at) {
    auto it = stored.find(at);
    return it == stored.end() ? 0 : it->second;
}

}  // namespace

std::vector<StoredChannel> channels_to_check(const ChannelCounts& counts, std::size_t cap,
                                             const std::map<LinkAndDay, std::size_t>& stored) {
    std::vector<StoredChannel> out;
    for (const auto& [at, channels] : channels_by_link_day(counts)) {
        if (stored_count(stored, at) + channels.size() <= cap) continue;
        for (const auto& [channel, n] : channels) out.emplace_back(at.first, at.second, channel);
    }
    return out;
}

ChannelFold fold_channels(ChannelCounts& counts, std::size_t cap,
                          const std::map<LinkAndDay, std::size_t>& stored,
                          const std::set<StoredChannel>& known) {
    // Per (link, day) at risk: the channels that keep their own rows.
    std::set<StoredChannel> kept;
    std::set<LinkAndDay> at_risk;
    for (const auto& [at, channels] : channels_by_link_day(counts)) {
        std::size_t have = stored_count(stored, at);
        if (have + channels.size() <= cap) continue;
        at_risk.insert(at);
        std::vector<std::pair<std::uint64_t, std::string>> fresh;
        for (const auto& [channel, n] : channels) {
            StoredChannel c{at.first, at.second, channel};
            if (known.count(c) != 0) {
                kept.insert(std::move(c));
            } else {
                fresh.emplace_back(n, channel);
            }
        }
        std::sort(fresh.begin(), fresh.end(), [](const auto& a, const auto& b) {
            return a.first != b.first ? a.first > b.first : a.second < b.second;
        });
        std::size_t room = have >= cap ? 0 : cap - have;
        for (std::size_t i = 0; i < fresh.size() && i < room; ++i)
            kept.emplace(at.first, at.second, fresh[i].second);
    }
    ChannelFold fold;
    if (at_risk.empty()) return fold;
    std::set<StoredChannel> moved;
    for (auto& [key, n] : counts) {
        if (key.is_targeting() || !capped_channel(key.channel_view())) continue;
        if (at_risk.count({key.link_id, key.day}) == 0) continue;
        StoredChannel c{key.link_id, key.day, std::string(key.channel_view())};
        if (kept.count(c) != 0) continue;
        fold.clicks += n;
        moved.insert(std::move(c));
        key = domain::CounterKey(key.link_id, key.day,
                                 static_cast<domain::ClickClass>(key.click_class),
                                 domain::kOtherChannel);
    }
    fold.channels = moved.size();
    return fold;
}

}  // namespace refgate::clicks
