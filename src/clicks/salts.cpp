#include "refgate/clicks/salts.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

namespace refgate::clicks {
namespace {

std::uint64_t rotl(std::uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }

std::uint64_t load_le64(const std::uint8_t* p) {
    std::uint64_t v;
    std::memcpy(&v, p, sizeof v);
    if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap64(v);
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

    // Whole 8-byte words are read straight from the message; only a piece's first and last
    // bytes go through the tail (a User-Agent is hashed on every human click).
    void update(const std::uint8_t* data, std::size_t size) {
        total_ += size;
        if (tail_size_ > 0) {
            std::size_t take = std::min(size, 8 - tail_size_);
            std::memcpy(tail_ + tail_size_, data, take);
            tail_size_ += take;
            data += take;
            size -= take;
            if (tail_size_ < 8) return;
            compress(load_le64(tail_));
            tail_size_ = 0;
        }
        for (; size >= 8; data += 8, size -= 8) compress(load_le64(data));
        std::memcpy(tail_, data, size);
        tail_size_ = size;
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

std::uint64_t burst_hash(const SaltKey& salt, const std::array<std::uint8_t, 16>& address,
                         std::string_view channel) {
    SipHash h(salt);
    // A leading tag keeps these hashes apart from unique_hash's, whatever the channel.
    const std::uint8_t tag[2] = {'b', static_cast<std::uint8_t>(channel.size())};
    h.update(tag, sizeof tag);
    h.update(address.data(), address.size());
    h.update(reinterpret_cast<const std::uint8_t*>(channel.data()), channel.size());
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

}  // namespace refgate::clicks
