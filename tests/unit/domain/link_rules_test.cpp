#include "refgate/domain/link_rules.hpp"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "refgate/codec/import_document.hpp"
#include "refgate/domain/snapshot.hpp"
#include "support/builders.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace link_rules_test {

namespace {

using refgate::domain::Link;
using refgate::domain::Partner;

using refgate::testing::make_snapshot;
using refgate::testing::tailscale;

Link link_to(std::string destination, std::optional<std::string> fallback = std::nullopt) {
    Link l = refgate::testing::make_link("tailscale", std::move(destination));
    l.fallback = std::move(fallback);
    return l;
}

// What a save path stores: the issues it reports, and the link with its canonical URLs.
std::vector<refgate::codec::ImportIssue> save(Link& link, const Partner& partner) {
    std::vector<Link> links{link};
    auto issues =
        refgate::codec::validate_links(links, [&](const std::string&) { return &partner; }, {});
    link = links.front();
    return issues;
}

}  // namespace

TEST_CASE("an empty or blank destination or fallback is refused at save time as empty",
          "[link_rules]") {
    Partner partner = tailscale();
    for (const char* blank : {"", "  "}) {
        Link empty_destination = link_to(blank);
        auto issues = save(empty_destination, partner);
        REQUIRE(issues.size() == 1);
        CHECK(issues[0].field == "destination");
        CHECK(issues[0].message == "must not be empty [empty]");

        Link empty_fallback = link_to("https://tailscale.com/", blank);
        issues = save(empty_fallback, partner);
        REQUIRE(issues.size() == 1);
        CHECK(issues[0].field == "fallback");
        CHECK(issues[0].message.ends_with("[empty]"));
    }
}

TEST_CASE("every link a save path accepts is served by the snapshot, and none it refuses",
          "[link_rules][snapshot]") {
    Partner partner = tailscale();
    for (const char* url :
         {"https://tailscale.com/pricing", "https://TailScale.com/a b", "", " ",
          "https://evil.com%2f.tailscale.com/", "https://xn--www-evil.tailscale.com/",
          "https://.tailscale.com/", "https://www..tailscale.com/", "https://tailscale.com:8443/",
          "https://bücher.tailscale.com/", "http://tailscale.com/", "https://evil.com/"}) {
        INFO(url);
        Link link = link_to(url);
        bool accepted = save(link, partner).empty();
        auto snapshot = make_snapshot({partner}, {link});
        bool served = snapshot->find("tailscale") != nullptr;
        CHECK(accepted == served);
        CHECK(snapshot->rejected().empty() == accepted);
    }
}

TEST_CASE("a link with a bad referral parameter on its partner is neither saved nor served",
          "[link_rules][snapshot]") {
    Partner partner = tailscale();
    partner.ref_param = "bad param";
    Link link = link_to("https://tailscale.com/");
    auto checked = refgate::domain::validate_link(link, partner, {});
    REQUIRE_FALSE(checked.ok());
    CHECK(checked.issues[0].field == "partner");
    auto snapshot = make_snapshot({partner}, {link});
    CHECK(snapshot->find("tailscale") == nullptr);
}

}  // namespace link_rules_test
