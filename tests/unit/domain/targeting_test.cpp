#include "refgate/domain/targeting.hpp"

#include <array>
#include <catch2/catch.hpp>
#include <cstring>
#include <string>
#include <vector>

#include "refgate/clicks/salts.hpp"
#include "refgate/codec/import_document.hpp"
#include "refgate/codec/snapshot_file.hpp"
#include "refgate/domain/click_classifier.hpp"
#include "refgate/domain/counter_key.hpp"
#include "refgate/domain/snapshot.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace targeting_test {

namespace {

using namespace refgate;

domain::Partner store(std::string slug, std::string domain, std::string code) {
    domain::Partner p;
    p.slug = std::move(slug);
    p.name = p.slug;
    p.ref_param = "tag";
    p.ref_code = std::move(code);
    p.allowed_domains = {std::move(domain)};
    return p;
}

std::vector<domain::Partner> stores() {
    return {store("amazon-us", "amazon.com", "picks-20"),
            store("amazon-de", "amazon.de", "picks-21"),
            store("amazon-fr", "amazon.fr", "picks-fr"),
            store("amazon-au", "amazon.com.au", "au-22"), store("other", "other.example", "o1")};
}

domain::LinkRule country_rule(std::vector<std::string> countries, std::string partner,
                              std::string destination) {
    domain::LinkRule r;
    r.country = std::move(countries);
    r.partner = std::move(partner);
    r.destination = std::move(destination);
    return r;
}

// The issue's example link: DE/AT to the German store, iOS to the app, French readers to the
// French store, everyone else split 70/30.
domain::Link kindle() {
    domain::Link l;
    l.id = 1;
    l.slug = "kindle";
    l.partner = "amazon-us";
    l.destination = "https://www.amazon.com/dp/B0X";
    l.rules.push_back(country_rule({"DE", "AT"}, "amazon-de", "https://www.amazon.de/dp/B0X"));
    domain::LinkRule ios;
    ios.platform = {"ios"};
    ios.destination = "https://www.amazon.com/dp/B0X?app=1";
    l.rules.push_back(ios);
    domain::LinkRule fr;
    fr.language = {"fr"};
    fr.partner = "amazon-fr";
    fr.destination = "https://www.amazon.fr/dp/B0X";
    l.rules.push_back(fr);
    domain::LinkRule split;
    split.split = {{70, "https://www.amazon.com/dp/B0X", ""},
                   {30, "https://www.amazon.com/dp/B0Y", ""}};
    l.rules.push_back(split);
    return l;
}

std::shared_ptr<const domain::Snapshot> build(std::vector<domain::Link> links,
                                              std::vector<domain::CountryGroup> groups = {},
                                              std::vector<domain::Partner> partners = stores()) {
    domain::Snapshot::Builder builder(1, std::move(partners), domain::UrlPolicy{}, "test",
                                      domain::SysSeconds{}, links.size());
    builder.country_groups(std::move(groups));
    for (auto& l : links) builder.add(std::move(l));
    return builder.finish({});
}

domain::ReaderTraits reader(std::string_view country,
                            domain::Platform platform = domain::Platform::desktop,
                            std::string_view language = "en-US") {
    return {domain::country_code(country), platform, language};
}

std::string location_for(const domain::Snapshot& s, const domain::ReaderTraits& r,
                         std::uint64_t key = 0) {
    const domain::LinkEntry* e = s.find("kindle");
    REQUIRE(e != nullptr);
    return std::string(s.target(*e, r, [&] { return key; }).location);
}

domain::PartnerFinder finder(const std::vector<domain::Partner>& partners) {
    return [&](const std::string& slug) -> const domain::Partner* {
        for (const auto& p : partners)
            if (p.slug == slug) return &p;
        return nullptr;
    };
}

}  // namespace

TEST_CASE("rules are tried in order and the first that matches wins", "[targeting]") {
    auto s = build({kindle()});
    // A German iPhone reader matches the country rule before the platform rule.
    CHECK(location_for(*s, reader("DE", domain::Platform::ios)) ==
          "https://www.amazon.de/dp/B0X?tag=picks-21");
    CHECK(location_for(*s, reader("US", domain::Platform::ios)) ==
          "https://www.amazon.com/dp/B0X?app=1&tag=picks-20");
    CHECK(location_for(*s, reader("CH", domain::Platform::android, "fr-CH")) ==
          "https://www.amazon.fr/dp/B0X?tag=picks-fr");
}

TEST_CASE("a reader no rule matches gets the link's own destination", "[targeting]") {
    domain::Link l = kindle();
    l.rules.pop_back();  // no split: nothing catches everyone
    auto s = build({l});
    CHECK(location_for(*s, reader("US")) == "https://www.amazon.com/dp/B0X?tag=picks-20");
    CHECK(location_for(*s, domain::ReaderTraits{}) == "https://www.amazon.com/dp/B0X?tag=picks-20");
    auto target = s->target(*s->find("kindle"), reader("US"), [] { return 0ull; });
    CHECK(target.rule == 0);
}

TEST_CASE("an unknown country matches no country rule", "[targeting]") {
    auto s = build({kindle()});
    auto t = s->target(*s->find("kindle"), domain::ReaderTraits{0, domain::Platform::desktop, "de"},
                       [] { return 0ull; });
    CHECK(t.rule == 4);  // the split, not the German store
}

TEST_CASE("a country group sends readers from a country without a store to its fallback",
          "[targeting]") {
    domain::Link l = kindle();
    l.rules.pop_back();
    l.rules.push_back(country_rule({"AU"}, "amazon-au", "https://www.amazon.com.au/dp/B0X"));
    domain::CountryGroup amazon{"amazon", {{"NZ", "AU"}, {"LU", "BE"}, {"BE", "DE"}}};
    auto s = build({l}, {amazon});
    CHECK(location_for(*s, reader("NZ")) == "https://www.amazon.com.au/dp/B0X?tag=au-22");
    // Two steps: LU -> BE -> DE.
    CHECK(location_for(*s, reader("LU")) == "https://www.amazon.de/dp/B0X?tag=picks-21");
    // A rule that matches the reader's own country comes first: an iPhone reader from NZ is
    // sent to the app before any fallback is tried.
    CHECK(location_for(*s, reader("NZ", domain::Platform::ios)) ==
          "https://www.amazon.com/dp/B0X?app=1&tag=picks-20");
    // The group belongs to the amazon family only.
    domain::Link other;
    other.slug = "kindle";
    other.partner = "other";
    other.destination = "https://other.example/x";
    other.rules.push_back(country_rule({"AU"}, "amazon-au", "https://www.amazon.com.au/dp/B0X"));
    auto s2 = build({other}, {amazon});
    CHECK(location_for(*s2, reader("NZ")) == "https://other.example/x?tag=o1");
}

TEST_CASE("a split gives a reader the same branch all day and the weights' proportions",
          "[targeting]") {
    auto s = build({kindle()});
    const domain::LinkEntry& e = *s->find("kindle");
    clicks::SaltKey salt{};
    salt[0] = 42;
    auto key_of = [&](std::uint32_t reader_number) {
        std::array<std::uint8_t, 16> address{};
        std::memcpy(address.data(), &reader_number, sizeof reader_number);
        return clicks::unique_hash(salt, address, "Mozilla/5.0", e.id);
    };
    std::size_t b_count = 0;
    constexpr std::uint32_t kReaders = 100'000;
    for (std::uint32_t i = 0; i < kReaders; ++i) {
        std::uint64_t key = key_of(i);
        auto t = s->target(e, reader("US"), [&] { return key; });
        REQUIRE(t.rule == 4);
        auto again = s->target(e, reader("US"), [&] { return key; });
        REQUIRE(again.branch == t.branch);
        if (t.branch == 1) ++b_count;
    }
    double share = static_cast<double>(b_count) / kReaders;
    CHECK(share > 0.29);
    CHECK(share < 0.31);
}

TEST_CASE("every branch's Location carries its own partner's code, locked", "[targeting]") {
    domain::Link l = kindle();
    l.rules[3].split[1].partner = "amazon-de";
    l.rules[3].split[1].destination = "https://www.amazon.de/dp/B0Y?tag=evil";
    auto s = build({l});
    const domain::LinkEntry& e = *s->find("kindle");
    bool seen = false;
    for (std::uint64_t key = 0; key < 64 && !seen; ++key) {
        auto t = s->target(e, reader("US"), [&] { return key * 0x0400'0000'0000'0000ull; });
        if (t.branch == 1) {
            CHECK(t.location == "https://www.amazon.de/dp/B0Y?tag=picks-21");
            CHECK(s->partner(t).slug == "amazon-de");
            seen = true;
        }
    }
    CHECK(seen);
}

TEST_CASE("a rule to an inactive storefront is skipped like a rule that does not match",
          "[targeting]") {
    auto partners = stores();
    partners[1].active = false;  // amazon-de
    domain::Link l = kindle();
    l.rules.insert(l.rules.begin() + 1,
                   country_rule({"DE"}, "amazon-fr", "https://www.amazon.fr/dp/B0Z"));
    auto s = build({l}, {}, partners);
    // The German reader's first rule names the inactive store: the next rule that matches answers.
    auto t = s->target(*s->find("kindle"), reader("DE"), [] { return 0ull; });
    CHECK(t.rule == 2);
    CHECK(t.location == "https://www.amazon.fr/dp/B0Z?tag=picks-fr");
    CHECK(location_for(*s, reader("AT", domain::Platform::ios)) ==
          "https://www.amazon.com/dp/B0X?app=1&tag=picks-20");
    t = s->target(*s->find("kindle"), reader("AT"), [] { return 0ull; });
    CHECK(t.rule == 5);  // the split
    CHECK(s->partner(t).slug == "amazon-us");
    // A country group's fallback to it is skipped the same way: the link's own destination.
    domain::Link only = kindle();
    only.rules.resize(1);
    domain::CountryGroup amazon{"amazon", {{"LU", "DE"}}};
    auto s2 = build({only}, {amazon}, partners);
    CHECK(location_for(*s2, reader("LU")) == "https://www.amazon.com/dp/B0X?tag=picks-20");
    CHECK(s2->target(*s2->find("kindle"), reader("DE"), [] { return 0ull; }).rule == 0);
    // Active again, it gets its readers back.
    auto s3 = build({kindle()});
    CHECK(location_for(*s3, reader("DE")) == "https://www.amazon.de/dp/B0X?tag=picks-21");
}

TEST_CASE("a split never draws an inactive storefront's branch, and is skipped when all are",
          "[targeting]") {
    auto partners = stores();
    partners[1].active = false;  // amazon-de
    partners[2].active = false;  // amazon-fr
    domain::Link l = kindle();
    l.rules[3].split[0].partner = "amazon-de";
    l.rules[3].split[0].destination = "https://www.amazon.de/dp/B0X";
    auto s = build({l}, {}, partners);
    const domain::LinkEntry& e = *s->find("kindle");
    for (std::uint64_t key = 0; key < 256; ++key) {
        auto t = s->target(e, reader("US"), [&] { return key * 0x0100'0000'0000'0000ull; });
        REQUIRE(t.rule == 4);
        REQUIRE(t.branch == 1);
        REQUIRE(t.location == "https://www.amazon.com/dp/B0Y?tag=picks-20");
    }
    // Both branches inactive: the rule is skipped and the link's destination answers.
    l.rules[3].split[1].partner = "amazon-fr";
    l.rules[3].split[1].destination = "https://www.amazon.fr/dp/B0Y";
    auto all = build({l}, {}, partners);
    auto t = all->target(*all->find("kindle"), reader("US"), [] { return 0ull; });
    CHECK(t.rule == 0);
    CHECK(t.location == "https://www.amazon.com/dp/B0X?tag=picks-20");
}

TEST_CASE("a rule whose destination leaves its partner's domains is refused with its index",
          "[targeting]") {
    auto partners = stores();
    domain::Link l = kindle();
    l.rules[2].destination = "https://www.amazon.com/dp/B0X";  // amazon-fr allows amazon.fr only
    l.rules[3].split[0].weight = 0;
    l.rules[0].country = {"de", "DEU"};
    l.rules[1].platform = {"windows"};
    auto issues =
        domain::validate_rules(l.rules, partners[0], finder(partners), domain::UrlPolicy{});
    std::vector<std::string> fields;
    for (const auto& i : issues) fields.push_back(i.field + " " + i.rule);
    CHECK_THAT(fields, Catch::Matchers::VectorContains(
                           std::string("rules[2].destination host_not_allowed")));
    CHECK_THAT(fields, Catch::Matchers::VectorContains(
                           std::string("rules[3].split[0].weight invalid_weight")));
    CHECK_THAT(fields,
               Catch::Matchers::VectorContains(std::string("rules[0].country invalid_country")));
    CHECK_THAT(fields,
               Catch::Matchers::VectorContains(std::string("rules[1].platform invalid_platform")));
}

TEST_CASE("a rule with both a destination and a split, or an unknown partner, is refused",
          "[targeting]") {
    auto partners = stores();
    std::vector<domain::LinkRule> rules(2);
    rules[0].destination = "https://www.amazon.com/a";
    rules[0].split = {{1, "https://www.amazon.com/b", ""}};
    rules[1].partner = "amazon-jp";
    rules[1].destination = "https://www.amazon.co.jp/a";
    auto issues = domain::validate_rules(rules, partners[0], finder(partners), domain::UrlPolicy{});
    REQUIRE(issues.size() == 2);
    CHECK(issues[0].rule == "destination_or_split");
    CHECK(issues[1].field == "rules[1].partner");
    CHECK(issues[1].rule == "unknown_partner");
}

TEST_CASE("a snapshot leaves out the rules of a link that no longer validate, not the link",
          "[targeting]") {
    domain::Link l = kindle();
    l.rules[0].destination = "https://evil.example/x";
    auto s = build({l});
    REQUIRE(s->find("kindle") != nullptr);
    CHECK(s->find("kindle")->rule_count == 0);
    REQUIRE(s->rejected().size() == 1);
    CHECK(s->rejected()[0].find("rules[0].destination") != std::string::npos);
}

TEST_CASE("country groups that loop or fall back to themselves are refused", "[targeting]") {
    CHECK(domain::validate_country_group({"amazon", {{"AT", "DE"}, {"NZ", "AU"}}}).empty());
    CHECK(domain::validate_country_group({"amazon", {{"AT", "DE"}, {"DE", "AT"}}})[0].rule ==
          "cycle");
    CHECK(domain::validate_country_group({"amazon", {{"AT", "AT"}}})[0].rule == "self_fallback");
    CHECK(domain::validate_country_group({"amazon", {{"at", "DE"}}})[0].rule == "invalid_country");
    CHECK(domain::in_family("amazon-de", "amazon"));
    CHECK(domain::in_family("amazon", "amazon"));
    CHECK_FALSE(domain::in_family("amazonia", "amazon"));
}

TEST_CASE("the platform comes from a few substrings of the User-Agent", "[targeting]") {
    CHECK(domain::platform_of("Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X)") ==
          domain::Platform::ios);
    CHECK(domain::platform_of("Mozilla/5.0 (iPad; CPU OS 16_0 like Mac OS X)") ==
          domain::Platform::ios);
    CHECK(domain::platform_of("Mozilla/5.0 (Linux; Android 14; Pixel 8)") ==
          domain::Platform::android);
    CHECK(domain::platform_of("Mozilla/5.0 (Windows NT 10.0; Win64; x64)") ==
          domain::Platform::desktop);
    CHECK(domain::platform_of("Mozilla/5.0 (Macintosh; Intel Mac OS X 14_0)") ==
          domain::Platform::desktop);
    CHECK(domain::platform_of("curl/8.0") == domain::Platform::unknown);
    CHECK(domain::platform_of("") == domain::Platform::unknown);
    // Wherever the substrings stand: iOS before Android before desktop.
    CHECK(domain::platform_of("X11; Android; iPod") == domain::Platform::ios);
    CHECK(domain::platform_of("CrOS Android") == domain::Platform::android);
    CHECK(domain::platform_of("Linux") == domain::Platform::desktop);
    CHECK(domain::platform_of("iPhon Androi Window X1 Cr Linu Macintos") ==
          domain::Platform::unknown);
}

TEST_CASE("the preferred language is the Accept-Language tag with the highest q-value",
          "[targeting]") {
    CHECK(domain::preferred_language("fr-CH, fr;q=0.9, en;q=0.8") == "fr-CH");
    CHECK(domain::preferred_language("en;q=0.5, de;q=0.9, *;q=1") == "de");
    CHECK(domain::preferred_language("de;q=0, en;q=0.1") == "en");
    CHECK(domain::preferred_language("da, en-GB;q=0.8") == "da");
    CHECK(domain::preferred_language("x;q=bad, es;q=0.3") == "es");
    CHECK(domain::preferred_language("").empty());
    CHECK(domain::preferred_language("*").empty());
    CHECK(domain::language_matches("fr", "fr-CH"));
    CHECK(domain::language_matches("pt-br", "pt-BR"));
    CHECK_FALSE(domain::language_matches("pt-br", "pt"));
    CHECK_FALSE(domain::language_matches("fr", "fry"));
    CHECK(domain::valid_language_tag("zh-Hant-TW"));
    CHECK_FALSE(domain::valid_language_tag("f"));
    CHECK_FALSE(domain::valid_language_tag("fr-"));
}

TEST_CASE("rules and country groups survive the import format and the snapshot file",
          "[targeting]") {
    domain::Link l = kindle();
    auto json = codec::link_to_json(l);
    CHECK(json["rules"][0]["country"] == nlohmann::ordered_json({"DE", "AT"}));
    CHECK(json["rules"][3]["split"][1]["weight"] == 30);
    nlohmann::ordered_json doc{
        {"links", {json}},
        {"country_groups", {{{"family", "amazon"}, {"fallbacks", {{"NZ", "AU"}}}}}}};
    auto parsed = codec::parse_import(doc);
    REQUIRE(parsed.issues.empty());
    REQUIRE(parsed.document.links.size() == 1);
    CHECK(parsed.document.links[0].rules == l.rules);
    REQUIRE(parsed.document.country_groups.size() == 1);
    CHECK(parsed.document.country_groups[0].fallbacks[0].fallback == "AU");

    auto s = build({l}, parsed.document.country_groups);
    std::string text;
    codec::write_snapshot_json(*s, [&](std::string_view piece) { text.append(piece); });
    auto again = codec::read_snapshot_json(std::string_view(text), domain::UrlPolicy{});
    REQUIRE(again->find("kindle") != nullptr);
    CHECK(again->link(*again->find("kindle")).rules == l.rules);
    CHECK(again->country_groups() == s->country_groups());
}

TEST_CASE("a bad rule in an import names the rule and field", "[targeting]") {
    nlohmann::ordered_json doc{
        {"links",
         {{{"slug", "x"},
           {"partner", "amazon-us"},
           {"destination", "https://www.amazon.com/x"},
           {"rules",
            {{{"country", "DE"}, {"destination", "https://www.amazon.com/y"}},
             {{"split", {{{"weight", -1}, {"destination", "https://www.amazon.com/z"}}}},
              {"colour", "red"}}}}}}}};
    auto parsed = codec::parse_import(doc);
    std::vector<std::string> fields;
    for (const auto& i : parsed.issues) fields.push_back(i.field);
    CHECK_THAT(fields, Catch::Matchers::VectorContains(std::string("rules[0].country")));
    CHECK_THAT(fields, Catch::Matchers::VectorContains(std::string("rules[1].split[0].weight")));
    CHECK_THAT(fields, Catch::Matchers::VectorContains(std::string("rules[1].colour")));
}

}  // namespace targeting_test

namespace targeting_test {

TEST_CASE("a click is counted per country and rule under a key no channel can collide with",
          "[targeting]") {
    using namespace refgate;
    auto key = domain::CounterKey::targeting(42, domain::utc_day(1'795'968'000),
                                             domain::ClickClass::human, "DE", 4, 2);
    CHECK(key.field() == "42|2026-11-29|@DE:4.2|human");
    CHECK(key.is_targeting());
    CHECK(key.target_country() == "DE");
    CHECK(key.target_rule() == "4.2");
    CHECK(key.target_dimension() == domain::TargetDimension{{'D', 'E'}, 4, 2});
    CHECK(key.channel_view().empty());
    domain::CounterKey parsed;
    REQUIRE(domain::CounterKey::parse_field(key.field(), parsed));
    CHECK(parsed == key);
    CHECK(domain::CounterKeyHash{}(parsed) == domain::CounterKeyHash{}(key));
    // A field written before the target had its own place in the key reads the same.
    REQUIRE(domain::CounterKey::parse_field("42|2026-11-29|@AT:3|bot", parsed));
    CHECK(parsed.is_targeting());
    CHECK(parsed.target_dimension() == domain::TargetDimension{{'A', 'T'}, 3, 0});
    CHECK(parsed.field() == "42|2026-11-29|@AT:3|bot");
    CHECK_FALSE(parsed ==
                domain::CounterKey::targeting(42, parsed.day, domain::ClickClass::bot, "AT", 3, 1));
    CHECK(domain::CounterKey::targeting(7, 1, domain::ClickClass::bot, "", 0, 0).field() ==
          "7|1970-01-02|@XX:0|bot");
    CHECK_FALSE(domain::CounterKey::parse_field("42|2026-11-29|@de:4|human", parsed));
    CHECK_FALSE(domain::CounterKey::parse_field("42|2026-11-29|@DE:4.0|human", parsed));
    CHECK_FALSE(domain::CounterKey(42, 1, domain::ClickClass::human, "newsletter").is_targeting());
}

}  // namespace targeting_test
