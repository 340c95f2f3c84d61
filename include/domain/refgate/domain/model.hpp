#pragma once

// Partners and links as editors define them: the import/export format and the database rows.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "refgate/domain/time.hpp"

namespace refgate {

// A referral code that takes over from the partner's current one at valid_from.
struct ScheduledCode {
    SysSeconds valid_from;
    std::string ref_code;
    bool operator==(const ScheduledCode&) const = default;
};

struct Partner {
    std::int64_t id = 0;  // database id; 0 when not stored yet
    std::string slug;
    std::string name;
    std::string ref_param;
    std::string ref_code;
    std::vector<std::string> allowed_domains;
    std::vector<std::pair<std::string, std::string>> extra_params;  // ordered
    bool active = true;
    // Codes scheduled to take over, by valid_from; not part of the import format (the admin API
    // schedules them), but carried by snapshots so that every instance switches on time.
    std::vector<ScheduledCode> scheduled_codes;
};

enum class LinkStatus { active, disabled };

struct Link {
    std::int64_t id = 0;
    std::string slug;
    std::string partner;  // partner slug
    std::string destination;
    LinkStatus status = LinkStatus::active;
    std::optional<SysSeconds> expires_at;
    std::optional<std::string> fallback;
    bool utm_passthrough = false;
};

constexpr std::size_t kMaxSlugLength = 64;

// [a-z0-9][a-z0-9-]{0,63}
bool valid_slug(std::string_view slug);
// A referral or extra parameter name: [A-Za-z0-9_.-]{1,64}
bool valid_param_name(std::string_view name);

std::string_view to_string(LinkStatus status);
std::optional<LinkStatus> parse_link_status(std::string_view text);

}  // namespace refgate
