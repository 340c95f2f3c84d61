#include "refgate/codec/import_document.hpp"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace import_document_test {

namespace {

using json = nlohmann::ordered_json;
using refgate::codec::ImportIssue;
using refgate::domain::Link;
using refgate::domain::Partner;

const char* const kExample = R"({
  "partners": [{"slug": "tailscale", "name": "Tailscale", "ref_param": "ref", "ref_code": "picks42",
                "allowed_domains": ["tailscale.com"], "extra_params": {"utm_medium": "affiliate"}}],
  "links": [{"slug": "tailscale", "partner": "tailscale",
             "destination": "https://tailscale.com/pricing?plan=pro#teams", "status": "active",
             "expires_at": null, "fallback": null, "utm_passthrough": false}]
})";

json example() { return json::parse(kExample); }

std::string describe(const std::vector<ImportIssue>& issues) {
    std::string text;
    for (const auto& issue : issues) text += issue.to_string() + "\n";
    return text;
}

bool has_issue(const std::vector<ImportIssue>& issues, const std::string& entry,
               const std::string& field) {
    for (const auto& issue : issues) {
        if (issue.entry == entry && issue.field == field) return true;
    }
    return false;
}

std::vector<ImportIssue> issues_of(const json& doc) {
    return refgate::codec::parse_import(doc).issues;
}

}  // namespace

TEST_CASE("the example import document is valid", "[import]") {
    auto parsed = refgate::codec::parse_import(example());
    INFO(describe(parsed.issues));
    CHECK(parsed.issues.empty());
    REQUIRE(parsed.document.partners.size() == 1);
    REQUIRE(parsed.document.links.size() == 1);

    const Partner& p = parsed.document.partners[0];
    CHECK(p.slug == "tailscale");
    CHECK(p.name == "Tailscale");
    CHECK(p.ref_param == "ref");
    CHECK(p.ref_code == "picks42");
    CHECK(p.allowed_domains == std::vector<std::string>{"tailscale.com"});
    CHECK(p.extra_params ==
          std::vector<std::pair<std::string, std::string>>{{"utm_medium", "affiliate"}});
    CHECK(p.active);

    const Link& l = parsed.document.links[0];
    CHECK(l.slug == "tailscale");
    CHECK(l.partner == "tailscale");
    CHECK(l.destination == "https://tailscale.com/pricing?plan=pro#teams");
    CHECK(l.status == refgate::domain::LinkStatus::active);
    CHECK_FALSE(l.expires_at.has_value());
    CHECK_FALSE(l.fallback.has_value());
    CHECK_FALSE(l.utm_passthrough);
}

TEST_CASE("allowed domains come back canonical", "[import]") {
    auto doc = example();
    doc["partners"][0]["allowed_domains"] = {"TailScale.com", "Bücher.example"};
    auto parsed = refgate::codec::parse_import(doc);
    INFO(describe(parsed.issues));
    CHECK(parsed.issues.empty());
    CHECK(parsed.document.partners.at(0).allowed_domains ==
          std::vector<std::string>{"tailscale.com", "xn--bcher-kva.example"});
}

TEST_CASE("extra parameters keep the order the editor wrote them in", "[import]") {
    auto doc = json::parse(R"({"partners": [{"slug": "p", "name": "P", "ref_param": "ref",
        "ref_code": "c", "allowed_domains": ["p.com"],
        "extra_params": {"z": "1", "a": "2", "m": "3"}}], "links": []})");
    auto parsed = refgate::codec::parse_import(doc);
    INFO(describe(parsed.issues));
    CHECK(parsed.issues.empty());
    CHECK(parsed.document.partners.at(0).extra_params ==
          std::vector<std::pair<std::string, std::string>>{{"z", "1"}, {"a", "2"}, {"m", "3"}});
}

TEST_CASE("a partner's placements are read and written back in order", "[import][placement]") {
    auto doc = example();
    doc["partners"][0]["subid_param"] = "ascsubtag";
    doc["partners"][0]["subid_style"] = "readable";
    doc["partners"][0]["subid_charset"] = "a-z0-9_";
    doc["partners"][0]["channel_codes"] = {{{"channel", "newsletter"}, {"ref_code", "pub-nl-20"}},
                                           {{"channel", "blog-*"}, {"ref_code", "pub-blog-20"}}};
    auto parsed = refgate::codec::parse_import(doc);
    REQUIRE(parsed.issues.empty());
    const Partner& p = parsed.document.partners.at(0);
    CHECK(p.subid_param == "ascsubtag");
    CHECK(p.subid_style == refgate::domain::SubidStyle::readable);
    CHECK(p.channel_codes == std::vector<refgate::domain::ChannelCode>{{"newsletter", "pub-nl-20"},
                                                                       {"blog-*", "pub-blog-20"}});
    auto written = refgate::codec::partner_to_json(p);
    for (const char* key : {"subid_param", "subid_style", "subid_charset", "channel_codes"})
        CHECK(written[key] == doc["partners"][0][key]);
    // Without them: no sub-ID, opaque tokens of a-z0-9, no channel codes.
    auto plain = refgate::codec::partner_to_json(
        refgate::codec::parse_import(example()).document.partners.at(0));
    CHECK(plain["subid_param"].is_null());
    CHECK(plain["subid_style"] == "opaque");
    CHECK(plain["subid_charset"] == "a-z0-9");
    CHECK(plain["channel_codes"] == json::array());
}

TEST_CASE("a partner written by partner_to_json reads back whole (the snapshot file's reader)",
          "[import]") {
    auto doc = example();
    doc["partners"][0]["extra_params"] = {{"aff_src", "refgate"}, {"lang", "en"}};
    doc["partners"][0]["active"] = false;
    doc["partners"][0]["subid_param"] = "ascsubtag";
    doc["partners"][0]["subid_style"] = "readable";
    doc["partners"][0]["subid_charset"] = "a-z0-9_";
    doc["partners"][0]["channel_codes"] = {{{"channel", "newsletter"}, {"ref_code", "pub-nl-20"}}};
    auto parsed = refgate::codec::parse_import(doc);
    REQUIRE(parsed.issues.empty());
    const Partner& p = parsed.document.partners.at(0);
    // Every field partner_to_json writes comes back: a field added to one and not the other
    // shows here as a difference of the two objects.
    Partner back = refgate::codec::partner_from_json(refgate::codec::partner_to_json(p));
    CHECK(refgate::codec::partner_to_json(back) == refgate::codec::partner_to_json(p));
    CHECK(back.extra_params == p.extra_params);
    CHECK(back.channel_codes == p.channel_codes);
    CHECK_FALSE(back.active);
    // An older file's partner, without the placements' members: their defaults.
    auto old = refgate::codec::partner_to_json(p);
    for (const char* key : {"subid_param", "subid_style", "subid_charset", "channel_codes"})
        old.erase(key);
    Partner defaults = refgate::codec::partner_from_json(old);
    CHECK(defaults.subid_param.empty());
    CHECK(defaults.subid_style == refgate::domain::SubidStyle::opaque);
    CHECK(defaults.subid_charset == "a-z0-9");
    CHECK(defaults.channel_codes.empty());
}

TEST_CASE("a link with an expiry, a fallback and utm passthrough is read", "[import]") {
    auto doc = example();
    doc["links"][0]["expires_at"] = "2026-12-31T23:59:59Z";
    doc["links"][0]["fallback"] = "https://tailscale.com/";
    doc["links"][0]["utm_passthrough"] = true;
    doc["links"][0]["status"] = "disabled";
    auto parsed = refgate::codec::parse_import(doc);
    INFO(describe(parsed.issues));
    CHECK(parsed.issues.empty());
    const Link& l = parsed.document.links.at(0);
    REQUIRE(l.expires_at.has_value());
    CHECK(refgate::domain::format_rfc3339(*l.expires_at) == "2026-12-31T23:59:59Z");
    CHECK(l.fallback == std::optional<std::string>("https://tailscale.com/"));
    CHECK(l.utm_passthrough);
    CHECK(l.status == refgate::domain::LinkStatus::disabled);
}

TEST_CASE("each bad entry gives an issue that names the entry and the field", "[import]") {
    auto doc = example();
    std::string entry;
    std::string field;

    SECTION("a slug with upper case or underscores") {
        doc["links"][0]["slug"] = "Tail_Scale";
        entry = "links[0] (Tail_Scale)";
        field = "slug";
    }
    SECTION("a slug of 65 characters") {
        doc["links"][0]["slug"] = std::string(65, 'a');
        entry = "links[0] (" + std::string(65, 'a') + ")";
        field = "slug";
    }
    SECTION("a partner slug with upper case") {
        doc["partners"][0]["slug"] = "Tailscale";
        entry = "partners[0] (Tailscale)";
        field = "slug";
    }
    SECTION("an unknown field in a link") {
        doc["links"][0]["colour"] = "red";
        entry = "links[0] (tailscale)";
        field = "colour";
    }
    SECTION("an unknown field in a partner") {
        doc["partners"][0]["refcode"] = "picks42";
        entry = "partners[0] (tailscale)";
        field = "refcode";
    }
    SECTION("a missing referral code") {
        doc["partners"][0].erase("ref_code");
        entry = "partners[0] (tailscale)";
        field = "ref_code";
    }
    SECTION("a referral parameter that is not a parameter name") {
        doc["partners"][0]["ref_param"] = "ref code";
        entry = "partners[0] (tailscale)";
        field = "ref_param";
    }
    SECTION("an extra parameter that sets the referral parameter") {
        doc["partners"][0]["extra_params"]["ref"] = "someone-else";
        entry = "partners[0] (tailscale)";
        field = "extra_params";
    }
    SECTION("a sub-ID parameter named like the referral parameter") {
        doc["partners"][0]["subid_param"] = "Ref";
        entry = "partners[0] (tailscale)";
        field = "subid_param";
    }
    SECTION("a sub-ID parameter that a visitor's utm_* passthrough could carry") {
        doc["partners"][0]["subid_param"] = "UTM_content";
        entry = "partners[0] (tailscale)";
        field = "subid_param";
    }
    SECTION("a sub-ID parameter named like an extra parameter") {
        doc["partners"][0]["subid_param"] = "utm_medium";
        entry = "partners[0] (tailscale)";
        field = "subid_param";
    }
    SECTION("an unknown sub-ID style") {
        doc["partners"][0]["subid_style"] = "pretty";
        entry = "partners[0] (tailscale)";
        field = "subid_style";
    }
    SECTION("a sub-ID charset outside its syntax") {
        doc["partners"][0]["subid_charset"] = "a-z0-9~";
        entry = "partners[0] (tailscale)";
        field = "subid_charset";
    }
    SECTION("a channel code for something that is no channel") {
        doc["partners"][0]["channel_codes"] = {{{"channel", "News Letter"}, {"ref_code", "x"}}};
        entry = "partners[0] (tailscale)";
        field = "channel_codes[0].channel";
    }
    SECTION("a channel code without a code") {
        doc["partners"][0]["channel_codes"] = {{{"channel", "nl-*"}, {"ref_code", ""}}};
        entry = "partners[0] (tailscale)";
        field = "channel_codes[0].ref_code";
    }
    SECTION("an empty list of allowed domains") {
        doc["partners"][0]["allowed_domains"] = json::array();
        entry = "partners[0] (tailscale)";
        field = "allowed_domains";
    }
    SECTION("an invalid allowed domain") {
        doc["partners"][0]["allowed_domains"] = {"tailscale.com/pricing"};
        entry = "partners[0] (tailscale)";
        field = "allowed_domains";
    }
    SECTION("an unknown status") {
        doc["links"][0]["status"] = "paused";
        entry = "links[0] (tailscale)";
        field = "status";
    }
    SECTION("an expiry that is not a date") {
        doc["links"][0]["expires_at"] = "tomorrow";
        entry = "links[0] (tailscale)";
        field = "expires_at";
    }
    SECTION("an expiry on a day that does not exist") {
        doc["links"][0]["expires_at"] = "2026-02-30T00:00:00Z";
        entry = "links[0] (tailscale)";
        field = "expires_at";
    }
    SECTION("a utm passthrough that is not a boolean") {
        doc["links"][0]["utm_passthrough"] = "yes";
        entry = "links[0] (tailscale)";
        field = "utm_passthrough";
    }
    SECTION("a destination that is not a string") {
        doc["links"][0]["destination"] = 42;
        entry = "links[0] (tailscale)";
        field = "destination";
    }
    SECTION("a link that is not an object") {
        doc["links"][0] = 42;
        entry = "links[0]";
        field = "";
    }
    SECTION("a partner that is not an object") {
        doc["partners"][0] = "tailscale";
        entry = "partners[0]";
        field = "";
    }
    SECTION("a link slug that appears twice") {
        doc["links"].push_back(doc["links"][0]);
        entry = "links[1] (tailscale)";
        field = "slug";
    }
    SECTION("a partner slug that appears twice") {
        doc["partners"].push_back(doc["partners"][0]);
        entry = "partners[1] (tailscale)";
        field = "slug";
    }

    auto issues = issues_of(doc);
    INFO(describe(issues));
    CHECK(has_issue(issues, entry, field));
    CHECK(issues.size() == 1);
}

TEST_CASE("an issue reads as one sentence naming entry and field", "[import]") {
    auto doc = example();
    doc["links"][0]["status"] = "paused";
    auto issues = issues_of(doc);
    REQUIRE(issues.size() == 1);
    CHECK(issues[0].to_string() == "links[0] (tailscale): status must be active or disabled");
}

TEST_CASE("a slug of 64 characters is accepted", "[import]") {
    auto doc = example();
    doc["links"][0]["slug"] = std::string(64, 'a');
    auto issues = issues_of(doc);
    INFO(describe(issues));
    CHECK(issues.empty());
}

TEST_CASE("several bad entries give several issues", "[import]") {
    auto doc = example();
    doc["links"].push_back(doc["links"][0]);
    doc["links"].push_back(doc["links"][0]);
    doc["links"][0]["slug"] = "Tail_Scale";
    doc["links"][1]["slug"] = "ok-link";
    doc["links"][1]["status"] = "paused";
    doc["links"][2]["slug"] = "other";
    doc["links"][2]["expires_at"] = "2026-13-01T00:00:00Z";
    doc["partners"][0].erase("ref_code");

    auto issues = issues_of(doc);
    INFO(describe(issues));
    CHECK(has_issue(issues, "partners[0] (tailscale)", "ref_code"));
    CHECK(has_issue(issues, "links[0] (Tail_Scale)", "slug"));
    CHECK(has_issue(issues, "links[1] (ok-link)", "status"));
    CHECK(has_issue(issues, "links[2] (other)", "expires_at"));
    CHECK(issues.size() == 4);
}

TEST_CASE("a document that is not an object of partners and links is refused", "[import]") {
    CHECK(has_issue(issues_of(json::array()), "document", ""));
    CHECK(has_issue(issues_of(json::parse(R"({"partners": {}, "links": []})")), "document",
                    "partners"));
    CHECK(
        has_issue(issues_of(json::parse(R"({"partners": [], "links": 3})")), "document", "links"));
    CHECK(has_issue(issues_of(json::parse(R"({"partners": [], "links": [], "extra": 1})")),
                    "document", "extra"));
}

TEST_CASE("validating links canonicalises good destinations and fallbacks", "[import]") {
    auto parsed = refgate::codec::parse_import(example());
    REQUIRE(parsed.issues.empty());
    auto& links = parsed.document.links;
    links[0].destination = "HTTPS://Login.TailScale.com/straße";
    links[0].fallback = "https://TAILSCALE.com/";
    const auto& partners = parsed.document.partners;
    auto lookup = [&](const std::string& slug) -> const Partner* {
        for (const auto& p : partners) {
            if (p.slug == slug) return &p;
        }
        return nullptr;
    };

    auto issues = refgate::codec::validate_links(links, lookup, {});
    INFO(describe(issues));
    CHECK(issues.empty());
    CHECK(links[0].destination == "https://login.tailscale.com/stra%C3%9Fe");
    CHECK(links[0].fallback == std::optional<std::string>("https://tailscale.com/"));
}

TEST_CASE("validating links flags unknown partners and hosts outside the partner's domains",
          "[import]") {
    Partner tailscale;
    tailscale.slug = "tailscale";
    tailscale.ref_param = "ref";  // a stored partner always has one; links are checked with it
    tailscale.allowed_domains = {"tailscale.com"};
    auto lookup = [&](const std::string& slug) -> const Partner* {
        return slug == "tailscale" ? &tailscale : nullptr;
    };
    std::vector<Link> links(4);
    links[0].slug = "good";
    links[0].partner = "tailscale";
    links[0].destination = "https://tailscale.com/";
    links[1].slug = "orphan";
    links[1].partner = "nobody";
    links[1].destination = "https://tailscale.com/";
    links[2].slug = "elsewhere";
    links[2].partner = "tailscale";
    links[2].destination = "https://evil.com/";
    links[3].slug = "bad-fallback";
    links[3].partner = "tailscale";
    links[3].destination = "https://tailscale.com/x";
    links[3].fallback = "http://tailscale.com/";

    auto issues = refgate::codec::validate_links(links, lookup, {}, "links");
    INFO(describe(issues));
    CHECK(issues.size() == 3);
    CHECK(has_issue(issues, "links[1] (orphan)", "partner"));
    CHECK(has_issue(issues, "links[2] (elsewhere)", "destination"));
    CHECK(has_issue(issues, "links[3] (bad-fallback)", "fallback"));
    for (const auto& issue : issues) {
        if (issue.field == "destination") {
            CHECK_THAT(issue.message, Catch::Contains("[host_not_allowed]"));
        }
        if (issue.field == "fallback") CHECK_THAT(issue.message, Catch::Contains("[not_https]"));
    }
    CHECK(links[2].destination == "https://evil.com/");
}

TEST_CASE("an exported document imports again unchanged", "[import]") {
    auto parsed = refgate::codec::parse_import(example());
    REQUIRE(parsed.issues.empty());
    auto exported =
        refgate::codec::export_document(parsed.document.partners, parsed.document.links);
    auto again = refgate::codec::parse_import(exported);
    INFO(describe(again.issues));
    CHECK(again.issues.empty());
    CHECK(refgate::codec::export_document(again.document.partners, again.document.links) ==
          exported);
}

}  // namespace import_document_test

namespace import_document_test {

TEST_CASE("click caps: max_human_clicks is a positive integer or null, and is written back",
          "[import][caps]") {
    auto doc = example();
    doc["links"][0]["max_human_clicks"] = 500;
    auto parsed = refgate::codec::parse_import(doc);
    INFO(describe(parsed.issues));
    REQUIRE(parsed.issues.empty());
    const Link& l = parsed.document.links.at(0);
    CHECK(l.max_human_clicks == std::optional<std::int64_t>(500));
    CHECK(refgate::codec::link_to_json(l)["max_human_clicks"] == 500);

    doc["links"][0]["max_human_clicks"] = nullptr;
    parsed = refgate::codec::parse_import(doc);
    CHECK(parsed.issues.empty());
    CHECK_FALSE(parsed.document.links.at(0).max_human_clicks.has_value());
    CHECK(refgate::codec::link_to_json(parsed.document.links.at(0))["max_human_clicks"].is_null());

    for (const json& bad : {json(0), json(-5), json(1.5), json("10"), json(true)}) {
        INFO(bad.dump());
        doc["links"][0]["max_human_clicks"] = bad;
        CHECK(has_issue(issues_of(doc), "links[0] (tailscale)", "max_human_clicks"));
    }
}

TEST_CASE("click caps: a new link's bad cap is a field error", "[import][caps]") {
    auto object = example()["links"][0];
    object["max_human_clicks"] = 0;
    auto created = refgate::codec::parse_new_link(object);
    REQUIRE(created.errors.size() == 1);
    CHECK(created.errors[0].field == "max_human_clicks");
    object["max_human_clicks"] = 200;
    CHECK(refgate::codec::parse_new_link(object).errors.empty());
}

}  // namespace import_document_test
