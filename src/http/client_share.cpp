#include "client_share.hpp"

#include <algorithm>
#include <cstring>
#include <random>
#include <utility>

namespace refgate::http {
namespace {

// IPv4 arrives as IPv4-mapped IPv6 (::ffff:a.b.c.d).
bool ipv4_mapped(const domain::IpBytes& address) {
    constexpr domain::IpBytes kPrefix{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    return std::equal(address.begin(), address.begin() + 12, kPrefix.begin());
}

std::uint64_t mix(std::uint64_t x) {
    // splitmix64's finaliser.
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

}  // namespace

ClientShares::ClientShares(std::size_t per_client, std::vector<domain::IpNetwork> proxies)
    : per_client_(std::max<std::size_t>(per_client, 1)),
      proxies_(std::move(proxies)),
      held_(0, Hash{(std::uint64_t{std::random_device{}()} << 32) | std::random_device{}()}) {}

std::optional<domain::IpBytes> ClientShares::client(const domain::IpBytes& peer) const {
    if (domain::any_contains(proxies_, peer)) return std::nullopt;
    domain::IpBytes key = peer;
    if (!ipv4_mapped(peer)) std::fill(key.begin() + 8, key.end(), std::uint8_t{0});  // its /64
    return key;
}

bool ClientShares::take(const domain::IpBytes& peer) {
    auto key = client(peer);
    if (!key) return true;
    std::lock_guard lock(mutex_);
    auto& held = held_[*key];  // a new client's 0 is below per_client_ (at least 1)
    if (held >= per_client_) return false;
    ++held;
    return true;
}

void ClientShares::give_back(const domain::IpBytes& peer) {
    auto key = client(peer);
    if (!key) return;
    std::lock_guard lock(mutex_);
    auto found = held_.find(*key);
    if (found == held_.end()) return;
    if (--found->second == 0) held_.erase(found);
}

std::size_t ClientShares::clients() const {
    std::lock_guard lock(mutex_);
    return held_.size();
}

std::size_t ClientShares::Hash::operator()(const domain::IpBytes& client) const noexcept {
    std::uint64_t high = 0;
    std::uint64_t low = 0;
    std::memcpy(&high, client.data(), sizeof high);
    std::memcpy(&low, client.data() + sizeof high, sizeof low);
    return static_cast<std::size_t>(mix(mix(high ^ seed) ^ low));
}

}  // namespace refgate::http
