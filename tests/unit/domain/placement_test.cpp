#include "refgate/domain/placement.hpp"

#include <catch2/catch.hpp>
#include <regex>
#include <string>
#include <vector>

#include "refgate/domain/counter_key.hpp"
#include "refgate/domain/location.hpp"
#include "refgate/domain/snapshot.hpp"
#include "support/builders.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace placement_test {
namespace {

using refgate::domain::ChannelCode;
using refgate::domain::Partner;
using refgate::domain::SubidCharset;
using refgate::domain::SubidStyle;
using refgate::testing::make_link;
using refgate::testing::make_snapshot;
using refgate::testing::tailscale;

Partner impact() {
    Partner p = tailscale();
    p.subid_param = "subId1";
    p.channel_codes = {{"newsletter", "picks-nl"}, {"blog-*", "picks-blog"}};
    return p;
}

std::string readable(std::string_view slug, std::string_view channel, std::string_view charset) {
    Partner p = tailscale();
    p.subid_param = "sid";
    p.subid_style = SubidStyle::readable;
    p.subid_charset = std::string(charset);
    return refgate::domain::placement_token(p, 1, slug, channel);
}

TEST_CASE("opaque tokens are pinned: a change of the channel digest fails here", "[placement]") {
    // Computed apart from this code (FNV-1a 64 and splitmix64's finaliser, modulo 36^8, in
    // base36), so that every instance and version writes the tokens networks already report.
    Partner p = impact();
    CHECK(refgate::domain::placement_token(p, 1, "tailscale", "direct") == "1ns405ocv");
    CHECK(refgate::domain::placement_token(p, 1, "tailscale", "newsletter") == "1b1mldooh");
    CHECK(refgate::domain::placement_token(p, 42, "tailscale", "newsletter") == "16b1mldooh");
    CHECK(refgate::domain::placement_token(p, 42, "tailscale", "blog") == "16fzgst51v");
    CHECK(refgate::domain::placement_token(p, 123456789, "x", "other") == "21i3v9aae4tlip");
    CHECK(refgate::domain::placement_token(p, INT64_MAX, "x", "nl-2026-48") ==
          "1y2p0ij32e8e77jhy0b8l");
}

TEST_CASE("an opaque token names its link and channel and fits every network's sub-ID",
          "[placement]") {
    std::regex shape("^[a-z0-9]{1,32}$");
    Partner p = impact();
    for (std::int64_t id :
         {std::int64_t{1}, std::int64_t{35}, std::int64_t{36}, std::int64_t{99'999}, INT64_MAX}) {
        for (const std::string& channel :
             std::vector<std::string>{"direct", "other", "newsletter-2026-48",
                                      std::string(refgate::domain::kMaxChannelLength, 'z')}) {
            std::string token = refgate::domain::placement_token(p, id, "tailscale", channel);
            CAPTURE(id, channel, token);
            CHECK(std::regex_match(token, shape));
            auto parsed = refgate::domain::parse_opaque_token(token);
            REQUIRE(parsed);
            CHECK(parsed->link_id == id);
            CHECK(parsed->digest == refgate::domain::channel_digest(channel));
        }
    }
    // The slug does not enter an opaque token: a renamed link keeps its tokens.
    CHECK(refgate::domain::placement_token(p, 7, "a", "blog") ==
          refgate::domain::placement_token(p, 7, "b", "blog"));
    CHECK_FALSE(refgate::domain::parse_opaque_token("12345678"));               // no id
    CHECK_FALSE(refgate::domain::parse_opaque_token("01ns405ocv"));             // a leading zero
    CHECK_FALSE(refgate::domain::parse_opaque_token("1NS405OCV"));              // upper case
    CHECK_FALSE(refgate::domain::parse_opaque_token("zzzzzzzzzzzzzzzzzzzzz"));  // past int64
}

TEST_CASE("readable tokens hold the slug and the channel in the partner's characters",
          "[placement]") {
    CHECK(readable("tailscale", "newsletter", "a-z0-9") == "tailscalenewsletter");
    CHECK(readable("tailscale", "nl-2026.48", "a-z0-9_") == "tailscale_nl202648");
    CHECK(readable("my-pick", "nl-2026", "a-z0-9-") == "my-pick-nl-2026");
    CHECK(readable("my-pick2", "blog", "A-Z0-9") == "MYPICK2BLOG");  // letters in the other case
    CHECK(readable("abc123", "direct", "a-z") == "abcdirect");       // digits dropped
    for (std::string charset : {"a-z0-9", "A-Z0-9._", "a-f0-9-"}) {
        auto parsed = SubidCharset::parse(charset);
        REQUIRE(parsed);
        std::string token = readable(std::string(64, 'a'), std::string(48, 'b'), charset);
        CAPTURE(charset, token);
        CHECK(token.size() <= refgate::domain::kMaxReadableToken);
        for (char c : token) CHECK(parsed->allows(c));
    }
}

TEST_CASE("a partner's subid_charset is ranges and the literals - _ .", "[placement]") {
    CHECK(SubidCharset::parse("a-z0-9"));
    CHECK(SubidCharset::parse("a-zA-Z0-9_.-"));
    CHECK(SubidCharset::parse("a-f"));
    CHECK(SubidCharset::parse("-"));
    CHECK_FALSE(SubidCharset::parse(""));
    CHECK_FALSE(SubidCharset::parse("z-a"));      // a range backwards
    CHECK_FALSE(SubidCharset::parse("a-Z"));      // a range across kinds
    CHECK_FALSE(SubidCharset::parse("a-z0-9~"));  // '~' is no literal of the syntax
    CHECK_FALSE(SubidCharset::parse("a-z 0-9"));
    CHECK_FALSE(SubidCharset::parse(std::string(65, 'a')));
    CHECK(SubidCharset::parse("a-z0-9_")->separator() == '_');
    CHECK(SubidCharset::parse("a-z0-9.-")->separator() == '.');
    CHECK(SubidCharset::parse("a-z0-9")->separator() == 0);
}

TEST_CASE("readable tokens of two links that could collide are found before they are saved",
          "[placement]") {
    auto plain = *SubidCharset::parse("a-z0-9");
    auto separated = *SubidCharset::parse("a-z0-9_");
    std::vector<std::string> prefix_pair{"tailscale", "tail"};
    // "tail" + channel "scalenl" and "tailscale" + "nl" give the same token.
    auto found = refgate::domain::readable_collision(prefix_pair, plain);
    REQUIRE(found);
    CHECK(((found->first == "tail" && found->second == "tailscale")));
    CHECK_FALSE(refgate::domain::readable_collision(prefix_pair, separated));
    // A dropped '-' makes two slugs one.
    std::vector<std::string> dropped{"my-pick", "mypick", "other"};
    CHECK(refgate::domain::readable_collision(dropped, separated));
    // A slug of which the charset keeps nothing.
    std::vector<std::string> digits{"123"};
    CHECK(refgate::domain::readable_collision(digits, *SubidCharset::parse("a-z")));
    std::vector<std::string> fine{"tailscale", "backblaze", "notion", "1password"};
    CHECK_FALSE(refgate::domain::readable_collision(fine, plain));

    Partner p = tailscale();
    p.subid_param = "sid";
    p.subid_style = SubidStyle::readable;
    auto problem =
        refgate::domain::readable_token_problem(p, {make_link("tail"), make_link("tailscale")});
    REQUIRE(problem);
    CHECK_THAT(*problem, Catch::Contains("'tail' and 'tailscale' could collide"));
    // One slug on two branded domains gives both links the same tokens; the same link listed
    // twice (as stored and as saved) is one link.
    auto deal = make_link("deal");
    auto deal_de = make_link("deal");
    deal_de.domain = "de.example.com";
    auto twice = refgate::domain::readable_token_problem(p, {deal, deal_de});
    REQUIRE(twice);
    CHECK_THAT(*twice, Catch::Contains("'de.example.com/deal' and 'deal' could collide"));
    CHECK_FALSE(refgate::domain::readable_token_problem(p, {deal_de, deal_de}));
    // Opaque tokens name the link's id: they never collide.
    p.subid_style = SubidStyle::opaque;
    CHECK_FALSE(
        refgate::domain::readable_token_problem(p, {make_link("tail"), make_link("tailscale")}));
    CHECK_FALSE(refgate::domain::readable_token_problem(p, {deal, deal_de}));
}

TEST_CASE("a channel's code is the first channel_codes entry that matches it", "[placement]") {
    Partner p = impact();
    p.channel_codes.push_back({"blog-tech", "never"});  // after "blog-*": never reached
    CHECK(refgate::domain::code_for_channel(p, "newsletter") == "picks-nl");
    CHECK(refgate::domain::code_for_channel(p, "blog-tech") == "picks-blog");
    CHECK(refgate::domain::code_for_channel(p, "blog-") == "picks-blog");
    CHECK(refgate::domain::code_for_channel(p, "blog") == "picks42");
    CHECK(refgate::domain::code_for_channel(p, "direct") == "picks42");
    CHECK(refgate::domain::valid_channel_pattern("nl-*"));
    CHECK(refgate::domain::valid_channel_pattern("*"));
    CHECK(refgate::domain::valid_channel_pattern("newsletter"));
    CHECK_FALSE(refgate::domain::valid_channel_pattern("News"));
    CHECK_FALSE(refgate::domain::valid_channel_pattern("-*"));
    CHECK_FALSE(refgate::domain::valid_channel_pattern("a*b"));
}

TEST_CASE("a sub-ID parameter is refused where it would clash or could come from a visitor",
          "[placement]") {
    Partner p = impact();
    CHECK_FALSE(refgate::domain::subid_param_problem(p));
    p.subid_param = "REF";  // the referral parameter in another case
    CHECK(refgate::domain::subid_param_problem(p));
    p.subid_param = "Utm_Content";  // utm_* may pass through from the visitor's query
    CHECK(refgate::domain::subid_param_problem(p));
    p.subid_param = "utm_medium";
    CHECK(refgate::domain::subid_param_problem(p));
    p.subid_param = "a b";
    CHECK(refgate::domain::subid_param_problem(p));
}

// The Location of a channel as the redirect writes it, from the "direct" one.
std::string placed_for(const std::string& destination, const Partner& partner,
                       std::string_view channel) {
    auto placed = refgate::domain::placed_location(destination, partner, 42, "tailscale");
    REQUIRE(placed);
    std::string out;
    refgate::domain::write_placed_location(
        out, placed->location, placed->slots, refgate::domain::code_for_channel(partner, channel),
        refgate::domain::placement_token(partner, 42, "tailscale", channel));
    return out;
}

TEST_CASE(
    "a placement Location carries the sub-ID once, before the fragment, and the channel's code",
    "[placement][location]") {
    Partner p = impact();
    std::string nl = refgate::domain::placement_token(p, 42, "tailscale", "newsletter");
    CHECK(placed_for("https://tailscale.com/pricing?plan=pro#teams", p, "newsletter") ==
          "https://tailscale.com/pricing?plan=pro&ref=picks-nl&utm_medium=affiliate&subId1=" + nl +
              "#teams");
    // A stored destination that names the parameter (in any case, twice) gets it replaced.
    CHECK(placed_for("https://tailscale.com/?SUBID1=x&a=1&subid1=y#f", p, "newsletter") ==
          "https://tailscale.com/?subId1=" + nl + "&a=1&ref=picks-nl&utm_medium=affiliate#f");
    // Behind a ';' it would be a second sub-ID to servers that split on ';': escaped.
    CHECK(placed_for("https://tailscale.com/?a=1;subid1=x", p, "direct") ==
          "https://tailscale.com/?a=1%3Bsubid1=x&ref=picks42&utm_medium=affiliate&subId1=" +
              refgate::domain::placement_token(p, 42, "tailscale", "direct"));
    // A code that needs escaping is escaped as build_location() escapes the partner's.
    p.channel_codes = {{"nl", "a&b=c"}};
    CHECK(placed_for("https://tailscale.com/", p, "nl") ==
          "https://tailscale.com/?ref=a%26b%3Dc&utm_medium=affiliate&subId1=" +
              refgate::domain::placement_token(p, 42, "tailscale", "nl"));
}

TEST_CASE("every channel's Location is what building it afresh gives", "[placement][location]") {
    std::vector<std::string> destinations{
        "https://tailscale.com/pricing?plan=pro#teams",
        "https://tailscale.com/",
        "https://tailscale.com/?ref=someone&subId1=x",
        "https://tailscale.com/?subId1=a&ref=b&subid1=c#frag",
        "https://tailscale.com/p?zqRGcode0Xq=1&zqRGtoken0Xq=2",  // holds the markers
    };
    std::vector<Partner> partners{impact()};
    Partner codes_only = impact();
    codes_only.subid_param.clear();
    partners.push_back(codes_only);
    Partner subid_only = impact();
    subid_only.channel_codes.clear();
    partners.push_back(subid_only);
    Partner readable_partner = impact();
    readable_partner.subid_style = SubidStyle::readable;
    readable_partner.subid_charset = "a-z0-9_";
    partners.push_back(readable_partner);
    for (const auto& partner : partners) {
        for (const auto& destination : destinations) {
            for (std::string channel : {"direct", "other", "newsletter", "blog-tech", "x"}) {
                CAPTURE(partner.subid_param, destination, channel);
                std::optional<std::string> token;
                if (!partner.subid_param.empty())
                    token = refgate::domain::placement_token(partner, 42, "tailscale", channel);
                CHECK(placed_for(destination, partner, channel) ==
                      refgate::domain::build_placement_location(
                          destination, partner, refgate::domain::code_for_channel(partner, channel),
                          token ? std::optional<std::string_view>(*token) : std::nullopt));
            }
        }
    }
}

TEST_CASE("a snapshot keeps the placement slots of a link and of its rule branches",
          "[placement][snapshot]") {
    Partner own = tailscale();
    Partner store = impact();
    store.id = 2;
    store.slug = "tailscale-de";
    auto link = make_link("tailscale");
    link.id = 42;
    refgate::domain::LinkRule rule;
    rule.country = {"DE"};
    rule.partner = "tailscale-de";
    rule.destination = "https://tailscale.com/de";
    link.rules.push_back(rule);
    auto snapshot = make_snapshot({own, store}, {link});
    REQUIRE(snapshot->rejected().empty());
    const auto* entry = snapshot->find("tailscale");
    REQUIRE(entry);
    CHECK_FALSE(entry->placement.any());  // its own partner has no placements
    const auto& branch = snapshot->branches().at(0);
    REQUIRE(branch.placement.any());
    CHECK(branch.location ==
          "https://tailscale.com/de?ref=picks42&utm_medium=affiliate&subId1=" +
              refgate::domain::placement_token(store, 42, "tailscale", "direct"));
    // A scheduled code taking over builds the branch again, slots included.
    using std::chrono::seconds;
    store.scheduled_codes = {{refgate::domain::SysSeconds{seconds{4'000'000'000}}, "picks43"}};
    auto scheduled = make_snapshot({own, store}, {link});
    auto later = scheduled->at(refgate::domain::SysSeconds{seconds{4'000'000'001}});
    const auto& rebuilt = later->branches().at(0);
    REQUIRE(rebuilt.placement.any());
    CHECK(rebuilt.location ==
          "https://tailscale.com/de?ref=picks43&utm_medium=affiliate&subId1=" +
              refgate::domain::placement_token(store, 42, "tailscale", "direct"));
}

TEST_CASE(
    "a scheduled switch of channel codes takes over at its moment, the code kept, and the "
    "Locations are built again with a code slot",
    "[placement][snapshot]") {
    using std::chrono::seconds;
    const refgate::domain::SysSeconds at{seconds{4'000'000'000}};
    Partner p = tailscale();
    p.subid_param = "subId1";
    p.scheduled_codes = {{at, "", std::vector<ChannelCode>{{"newsletter", "picks-nl"}}},
                         {at + seconds{60}, "picks43", std::nullopt}};
    auto link = make_link("tailscale", "https://tailscale.com/pricing");
    link.id = 42;
    auto before = make_snapshot({p}, {link})->at(at - seconds{1});
    const auto* entry = before->find("tailscale");
    REQUIRE(entry);
    CHECK(entry->placement.code_at == 0);  // no channel has a code of its own yet
    CHECK(refgate::domain::code_for_channel(before->partners().at(0), "newsletter") == "picks42");

    auto after = before->at(at + seconds{1});
    const Partner& switched = after->partners().at(0);
    CHECK(switched.ref_code == "picks42");  // a switch of the list alone keeps the code
    CHECK(switched.channel_codes == std::vector<ChannelCode>{{"newsletter", "picks-nl"}});
    entry = after->find("tailscale");
    REQUIRE(entry);
    REQUIRE(entry->placement.code_at != 0);
    std::string location;
    refgate::domain::write_placed_location(
        location, entry->location, entry->placement, "picks-nl",
        refgate::domain::placement_token(switched, 42, "tailscale", "newsletter"));
    CHECK(location.find("ref=picks-nl&") != std::string::npos);

    // The next switch names the code only: the list stays.
    auto later = after->at(at + seconds{61});
    CHECK(later->partners().at(0).ref_code == "picks43");
    CHECK(later->partners().at(0).channel_codes == switched.channel_codes);
}

}  // namespace
}  // namespace placement_test
