#pragma once

// The partner, links and snapshots most unit tests start from; a test changes the fields its
// case is about on the copy it gets (`auto p = tailscale(); p.ref_code = "picks43";`).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "refgate/domain/disclosure.hpp"
#include "refgate/domain/model.hpp"
#include "refgate/domain/snapshot.hpp"

namespace refgate::testing {

// The destination of make_link's links unless told: a path, a query and a fragment, each of
// which a redirect must keep.
inline constexpr const char* kPricing = "https://tailscale.com/pricing?plan=pro#teams";

// Tailscale (id 1): referral parameter `ref` with code `picks42`, links allowed on tailscale.com
// only, and one extra parameter, utm_medium=affiliate.
domain::Partner tailscale();

// A link of `partner` (by slug), active, with no rules.
domain::Link make_link(std::string slug, std::string destination = kPricing,
                       std::string partner = "tailscale");

// Shop (slug `shop`, no id): referral parameter `ref` with code `picks42`, links allowed on
// shop.example only, no extra parameters: the partner whose pages link-health tests judge.
domain::Partner shop();

// Version `v` of the disclosure `key` in `locale`, its HTML made from `text` as the admin API
// makes it, updated at 2026-11-(10 + v) 12:00 UTC.
domain::Disclosure disclosure_version(std::string key, std::string locale, std::int64_t v,
                                      std::string text);

// A snapshot of `partners` and `links` with the default URL policy and no disclosures, built at
// the system clock's time.
std::shared_ptr<const domain::Snapshot> make_snapshot(std::vector<domain::Partner> partners,
                                                      std::vector<domain::Link> links,
                                                      std::uint64_t version = 1,
                                                      std::string source = "test");

}  // namespace refgate::testing
