#pragma once

// A listener's connections per client (HttpLimits::max_connections_per_client): one client may
// hold only its share of the listener's cap, so that one client opening many slow connections (a
// slowloris) leaves room for everyone else. A client is an IPv4 address or an IPv6 /64 (what one
// subscriber gets, and an attacker can cycle through); a proxy listed as carrying many clients
// counts against the cap only. Shared by the listener's I/O threads; used at accept and close
// only, never per request.

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#include "refgate/domain/ip_network.hpp"

namespace refgate::http {

class ClientShares {
  public:
    // `per_client` (at least 1) connections per client at most; `proxies` are not held to it.
    ClientShares(std::size_t per_client, std::vector<domain::IpNetwork> proxies);

    // A connection from `peer` opens: false (and nothing taken) when its client holds
    // `per_client` already.
    bool take(const domain::IpBytes& peer);
    // A connection that take() let in has closed.
    void give_back(const domain::IpBytes& peer);
    // Clients that hold connections now.
    std::size_t clients() const;

  private:
    // The client `peer` counts as; nullopt for a proxy.
    std::optional<domain::IpBytes> client(const domain::IpBytes& peer) const;

    struct Hash {
        // Seeded per process, so that no one can choose addresses that share a bucket.
        std::uint64_t seed;
        std::size_t operator()(const domain::IpBytes& client) const noexcept;
    };

    const std::size_t per_client_;
    const std::vector<domain::IpNetwork> proxies_;
    mutable std::mutex mutex_;
    std::unordered_map<domain::IpBytes, std::uint32_t, Hash> held_;
};

}  // namespace refgate::http
