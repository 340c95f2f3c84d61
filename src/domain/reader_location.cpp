#include "refgate/domain/reader_location.hpp"

#include <algorithm>
#include <iterator>

#include "refgate/domain/location.hpp"

namespace refgate::domain {

bool apply_due_codes(Partner& partner, SysSeconds now) {
    auto& schedule = partner.scheduled_codes;
    std::sort(schedule.begin(), schedule.end(),
              [](const auto& a, const auto& b) { return a.valid_from < b.valid_from; });
    auto first_future = std::find_if(schedule.begin(), schedule.end(),
                                     [now](const auto& s) { return s.valid_from > now; });
    if (first_future == schedule.begin()) return false;
    // In order: each due switch sets what it names (a switch of channel codes alone keeps the
    // code, one of the code alone keeps the channel codes).
    for (auto it = schedule.begin(); it != first_future; ++it) {
        if (!it->ref_code.empty()) partner.ref_code = it->ref_code;
        if (it->channel_codes) partner.channel_codes = *it->channel_codes;
    }
    schedule.erase(schedule.begin(), first_future);
    return true;
}

std::optional<std::string> reader_location(const Link& link, Partner partner, SysSeconds now) {
    bool expired = link.expires_at && now >= *link.expires_at;
    if (link.status != LinkStatus::active || !partner.active || expired) return link.fallback;
    apply_due_codes(partner, now);
    return build_location(link.destination, partner);
}

}  // namespace refgate::domain
