#include "refgate/core/clicks.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <thread>

#include "refgate/core/background_thread.hpp"
#include "refgate/core/click_classifier.hpp"

namespace refgate {
namespace {

constexpr std::string_view kDirect = "direct";

std::uint64_t rotl(std::uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }

std::uint64_t load_le64(const std::uint8_t* p) {
    std::uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
    return v;
}

// SipHash-2-4 over a message given in pieces, so that no buffer is built per click.
class SipHash {
  public:
    explicit SipHash(const SaltKey& key) {
        std::uint64_t k0 = load_le64(key.data());
        std::uint64_t k1 = load_le64(key.data() + 8);
        v0_ = 0x736f6d6570736575ULL ^ k0;
        v1_ = 0x646f72616e646f6dULL ^ k1;
        v2_ = 0x6c7967656e657261ULL ^ k0;
        v3_ = 0x7465646279746573ULL ^ k1;
    }

    void update(const std::uint8_t* data, std::size_t size) {
        for (std::size_t i = 0; i < size; ++i) {
            tail_[tail_size_++] = data[i];
            ++total_;
            if (tail_size_ == 8) {
                compress(load_le64(tail_));
                tail_size_ = 0;
            }
        }
    }

    std::uint64_t finish() {
        std::uint64_t b = static_cast<std::uint64_t>(total_ & 0xff) << 56;
        for (std::size_t i = 0; i < tail_size_; ++i)
            b |= static_cast<std::uint64_t>(tail_[i]) << (8 * i);
        compress(b);
        v2_ ^= 0xff;
        for (int i = 0; i < 4; ++i) round();
        return v0_ ^ v1_ ^ v2_ ^ v3_;
    }

  private:
    void round() {
        v0_ += v1_;
        v1_ = rotl(v1_, 13);
        v1_ ^= v0_;
        v0_ = rotl(v0_, 32);
        v2_ += v3_;
        v3_ = rotl(v3_, 16);
        v3_ ^= v2_;
        v0_ += v3_;
        v3_ = rotl(v3_, 21);
        v3_ ^= v0_;
        v2_ += v1_;
        v1_ = rotl(v1_, 17);
        v1_ ^= v2_;
        v2_ = rotl(v2_, 32);
    }
    void compress(std::uint64_t m) {
        v3_ ^= m;
        round();
        round();
        v0_ ^= m;
    }

    std::uint64_t v0_, v1_, v2_, v3_;
    std::uint8_t tail_[8] = {};
    std::size_t tail_size_ = 0;
    std::uint64_t total_ = 0;
};

}  // namespace

bool valid_channel(std::string_view channel) {
    if (channel.empty() || channel.size() > kMaxChannelLength) return false;
    auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
    if (!alnum(channel.front())) return false;
    for (char c : channel) {
        if (!alnum(c) && c != '.' && c != '_' && c != '-') return false;
    }
    return true;
}

std::string_view channel_of(std::string_view raw_query) {
    // The first src parameter decides; its raw form must already be a valid tag, so anything
    // percent-encoded is "direct".
    std::size_t pos = 0;
    while (pos <= raw_query.size()) {
        auto amp = raw_query.find('&', pos);
        std::string_view param = raw_query.substr(
            pos, amp == std::string_view::npos ? std::string_view::npos : amp - pos);
        if (param.starts_with("src=")) {
            std::string_view value = param.substr(4);
            return valid_channel(value) ? value : kDirect;
        }
        if (amp == std::string_view::npos) break;
        pos = amp + 1;
    }
    return kDirect;
}

std::int32_t utc_day(std::int64_t unix_seconds) {
    auto days = unix_seconds / 86'400;
    if (unix_seconds < 0 && unix_seconds % 86'400 != 0) --days;
    return static_cast<std::int32_t>(days);
}

std::string format_day(std::int32_t day) {
    char buf[kDayLength];
    format_day(day, buf);
    return std::string(buf, sizeof buf);
}

void format_day(std::int32_t day, char (&out)[kDayLength]) {
    using namespace std::chrono;
    year_month_day ymd{sys_days{days{day}}};
    // Years outside 0000-9999 cannot occur for a click; they are clamped rather than overflow.
    int y = std::clamp(static_cast<int>(ymd.year()), 0, 9999);
    auto m = static_cast<unsigned>(ymd.month());
    auto d = static_cast<unsigned>(ymd.day());
    out[0] = static_cast<char>('0' + y / 1000);
    out[1] = static_cast<char>('0' + y / 100 % 10);
    out[2] = static_cast<char>('0' + y / 10 % 10);
    out[3] = static_cast<char>('0' + y % 10);
    out[4] = '-';
    out[5] = static_cast<char>('0' + m / 10);
    out[6] = static_cast<char>('0' + m % 10);
    out[7] = '-';
    out[8] = static_cast<char>('0' + d / 10);
    out[9] = static_cast<char>('0' + d % 10);
}

CounterKey::CounterKey(std::int64_t link, std::int32_t d, ClickClass cls, std::string_view ch)
    : link_id(link), day(d), click_class(static_cast<std::uint8_t>(cls)) {
    if (ch.size() > kMaxChannelLength) ch = kDirect;
    channel_length = static_cast<std::uint8_t>(ch.size());
    std::memcpy(channel.data(), ch.data(), ch.size());
}

std::string CounterKey::field() const {
    char buf[kMaxFieldLength];
    return std::string(buf, write_field(buf));
}

std::size_t CounterKey::write_field(char* out) const {
    char* p = std::to_chars(out, out + 20, link_id).ptr;
    *p++ = '|';
    char day_text[kDayLength];
    format_day(day, day_text);
    p = std::copy_n(day_text, kDayLength, p);
    *p++ = '|';
    auto ch = channel_view();
    p = std::copy(ch.begin(), ch.end(), p);
    *p++ = '|';
    auto cls = to_string(static_cast<ClickClass>(click_class));
    p = std::copy(cls.begin(), cls.end(), p);
    return static_cast<std::size_t>(p - out);
}

bool CounterKey::parse_field(std::string_view field, CounterKey& out) {
    auto a = field.find('|');
    auto b = a == std::string_view::npos ? a : field.find('|', a + 1);
    auto c = b == std::string_view::npos ? b : field.find('|', b + 1);
    if (c == std::string_view::npos) return false;
    std::int64_t link = 0;
    auto link_text = field.substr(0, a);
    // Only the form write_field() produces ("42", "-3"; not "042" or "42x"), so that one counter
    // is never read under two spellings.
    auto [link_end, link_ec] =
        std::from_chars(link_text.data(), link_text.data() + link_text.size(), link);
    if (link_ec != std::errc{} || link_end != link_text.data() + link_text.size()) return false;
    char canonical[20];
    auto canonical_end = std::to_chars(canonical, canonical + sizeof canonical, link).ptr;
    if (std::string_view(canonical, static_cast<std::size_t>(canonical_end - canonical)) !=
        link_text)
        return false;
    auto day_text = field.substr(a + 1, b - a - 1);
    int y = 0;
    unsigned m = 0, d = 0;
    auto number = [&](std::size_t at, std::size_t length, auto& out) {
        const char* first = day_text.data() + at;
        auto [end, ec] = std::from_chars(first, first + length, out);
        return ec == std::errc{} && end == first + length;
    };
    if (day_text.size() != kDayLength || day_text[4] != '-' || day_text[7] != '-' ||
        !number(0, 4, y) || y < 0 || !number(5, 2, m) || !number(8, 2, d)) {
        return false;
    }
    using namespace std::chrono;
    year_month_day ymd{year{y}, month{m}, std::chrono::day{d}};
    if (!ymd.ok()) return false;
    auto channel = field.substr(b + 1, c - b - 1);
    auto cls = field.substr(c + 1);
    ClickClass parsed;
    if (cls == "human") {
        parsed = ClickClass::human;
    } else if (cls == "bot") {
        parsed = ClickClass::bot;
    } else if (cls == "prefetch") {
        parsed = ClickClass::prefetch;
    } else {
        return false;
    }
    if (!valid_channel(channel)) return false;
    out = CounterKey(link, static_cast<std::int32_t>(sys_days{ymd}.time_since_epoch().count()),
                     parsed, channel);
    return true;
}

void append_batch_line(std::string& blob, const CounterKey& key, std::uint64_t clicks) {
    char line[CounterKey::kMaxFieldLength + 1 + 20 + 1];
    char* p = line + key.write_field(line);
    *p++ = ' ';
    p = std::to_chars(p, line + sizeof line, clicks).ptr;
    *p++ = '\n';
    blob.append(line, static_cast<std::size_t>(p - line));
}

bool parse_bucket_count(std::string_view text, std::uint64_t& out) {
    if (text.empty()) return false;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc{} && end == text.data() + text.size();
}

void CounterTable::resize(std::size_t slot_count) {
    std::vector<Slot> old(slot_count);
    old.swap(slots_);
    used_ = 0;
    const std::size_t mask = slots_.size() - 1;
    for (const Slot& slot : old) {
        if (slot.hash == 0) continue;
        std::size_t i = slot.hash & mask;
        while (slots_[i].hash != 0) i = (i + 1) & mask;
        slots_[i] = slot;
        ++used_;
    }
}

std::uint64_t SentSamples::fingerprint(const UniqueSample& s) {
    // The hash is already keyed per link and day (salt); the mix only keeps apart equal hashes of
    // different links or days. 0 marks an empty slot.
    std::uint64_t x = s.hash ^ (static_cast<std::uint64_t>(s.link_id) * 0x9e3779b97f4a7c15ULL) ^
                      (static_cast<std::uint64_t>(static_cast<std::uint32_t>(s.day)) << 40);
    x ^= x >> 31;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 29;
    return x == 0 ? 1 : x;
}

bool SentSamples::contains(const UniqueSample& s) const {
    if (slots_.empty()) return false;
    auto fp = fingerprint(s);
    return slots_[fp >> (64 - kSlotBits)] == fp;
}

void SentSamples::insert(const UniqueSample& s) {
    if (slots_.empty()) slots_.assign(std::size_t{1} << kSlotBits, 0);
    auto fp = fingerprint(s);
    slots_[fp >> (64 - kSlotBits)] = fp;
}

void ClickShard::drain(DrainedClicks& out) {
    std::size_t taken = active_.load();
    active_.store(1 - taken);
    // A write that read the old side before the switch ends soon: an increment, or at worst the
    // growth of the table when more distinct keys than ever arrive.
    while (writing_.load()) std::this_thread::yield();
    // The recording thread now writes to the other side; this one is ours until the next switch.
    Side& side = sides_[taken];
    CpuSlicer slicer;
    side.counts.take_all(out.counts, [&] { slicer.step(); });
    out.samples.insert(out.samples.end(), side.samples.begin(), side.samples.end());
    side.samples.clear();
    out.samples_dropped += side.samples_dropped;
    side.samples_dropped = 0;
}

std::uint64_t siphash24(const SaltKey& key, std::string_view message) {
    SipHash h(key);
    h.update(reinterpret_cast<const std::uint8_t*>(message.data()), message.size());
    return h.finish();
}

std::uint64_t unique_hash(const SaltKey& salt, const std::array<std::uint8_t, 16>& address,
                          std::string_view user_agent, std::int64_t link_id) {
    SipHash h(salt);
    h.update(address.data(), address.size());
    std::uint8_t length[2] = {static_cast<std::uint8_t>(user_agent.size() & 0xff),
                              static_cast<std::uint8_t>((user_agent.size() >> 8) & 0xff)};
    h.update(length, sizeof length);
    h.update(reinterpret_cast<const std::uint8_t*>(user_agent.data()), user_agent.size());
    std::uint8_t link[8];
    for (int i = 0; i < 8; ++i)
        link[i] =
            static_cast<std::uint8_t>((static_cast<std::uint64_t>(link_id) >> (8 * i)) & 0xff);
    h.update(link, sizeof link);
    return h.finish();
}

void SaltBox::set(std::int32_t day, const SaltKey& key) {
    std::lock_guard lock(mutex_);
    for (auto& slot : salts_.slots) {
        if (slot.first == day) {
            if (slot.second == key) return;
            slot.second = key;
            generation_.fetch_add(1, std::memory_order_acq_rel);
            return;
        }
    }
    // Replace the older day.
    auto& oldest =
        salts_.slots[0].first <= salts_.slots[1].first ? salts_.slots[0] : salts_.slots[1];
    oldest = {day, key};
    generation_.fetch_add(1, std::memory_order_acq_rel);
}

Salts SaltBox::current() const {
    std::lock_guard lock(mutex_);
    return salts_;
}

}  // namespace refgate
