#pragma once

// The commissions and earnings tests' data set (issue 43): two partners on two networks' sub-ID
// parameters, four links, imported into a fresh database; the placement tokens a redirect writes,
// and clicks written as a flush writes them.

#include <string>
#include <utility>
#include <vector>

#include "refgate/domain/model.hpp"
#include "refgate/domain/placement.hpp"
#include "support/service_process.hpp"
#include "support/test_database.hpp"

namespace refgate::test {

// impact-co (Impact's subId1, a code per channel) with shop, shop-pro and shop-new; awin-co
// (Awin's clickref) with gear.
inline constexpr const char* kEarningsDocument = R"json({
  "partners": [
    {"slug": "impact-co", "name": "Impact Co", "ref_param": "ref", "ref_code": "picks42",
     "allowed_domains": ["shop.example.com"], "extra_params": {}, "subid_param": "subId1",
     "channel_codes": [{"channel": "newsletter", "ref_code": "picks-nl"},
                       {"channel": "blog-*", "ref_code": "picks-blog"}]},
    {"slug": "awin-co", "name": "Awin Co", "ref_param": "ref", "ref_code": "p7",
     "allowed_domains": ["gear.example.com"], "extra_params": {}, "subid_param": "clickref"}
  ],
  "links": [
    {"slug": "shop", "partner": "impact-co", "destination": "https://shop.example.com/"},
    {"slug": "shop-pro", "partner": "impact-co", "destination": "https://shop.example.com/pro"},
    {"slug": "shop-new", "partner": "impact-co", "destination": "https://shop.example.com/new"},
    {"slug": "gear", "partner": "awin-co", "destination": "https://gear.example.com/"}
  ]
})json";

using Headers = std::vector<std::pair<std::string, std::string>>;

inline Headers with_token(const std::string& token, const std::string& type = "") {
    Headers h{{"Authorization", "Bearer " + token}};
    if (!type.empty()) h.emplace_back("Content-Type", type);
    return h;
}

struct EarningsData {
    TestDatabase db;
    bool imported = import_json(db.url(), kEarningsDocument).exit_code == 0;

    std::string link_id(const std::string& slug) {
        return db.scalar("SELECT id FROM refgate_links WHERE slug = '" + slug + "'");
    }
    // The token the redirect writes for a click of `channel` on `slug` (its partner's sub-ID
    // parameter decides the token's form).
    std::string token(const std::string& slug, const std::string& channel = "direct") {
        domain::Partner p;
        p.subid_param = db.scalar(
            "SELECT p.subid_param FROM refgate_links l JOIN refgate_partners p ON p.id = "
            "l.partner_id WHERE l.slug = '" +
            slug + "'");
        return domain::placement_token(p, std::stoll(link_id(slug)), slug, channel);
    }
    std::string count(const std::string& table) {
        return db.scalar("SELECT count(*) FROM " + table);
    }
    // Clicks of a link, UTC day ("YYYY-MM-DD") and channel, in the base table and the link's day
    // roll-up, as a flush writes them.
    void clicks(const std::string& slug, const std::string& day, const std::string& channel,
                int human, int bot = 0) {
        std::string h = std::to_string(human), b = std::to_string(bot);
        db.exec(
            "INSERT INTO refgate_click_counts (link_id, day, channel, human, bot, prefetch) "
            "VALUES (" +
            link_id(slug) + ", '" + day + "', '" + channel + "', " + h + ", " + b +
            ", 0); INSERT INTO refgate_rollup_link_days (link_id, day, human, bot) VALUES (" +
            link_id(slug) + ", '" + day + "', " + h + ", " + b +
            ") ON CONFLICT (link_id, day) DO UPDATE SET human = refgate_rollup_link_days.human "
            "+ EXCLUDED.human, bot = refgate_rollup_link_days.bot + EXCLUDED.bot");
    }
};

// With an editor's and a viewer's API token.
struct EarningsFixture : EarningsData {
    std::string editor = create_api_token(db.url(), "eddie", "editor");
    std::string viewer = create_api_token(db.url(), "vera", "viewer");
};

}  // namespace refgate::test
