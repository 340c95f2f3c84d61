#include <catch2/catch.hpp>
#include <sstream>

#include "refgate/codec/snapshot_file.hpp"
#include "refgate/domain/snapshot.hpp"
#include "support/builders.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace domains_snapshot_test {

using namespace refgate;
using refgate::testing::make_link;
using refgate::testing::tailscale;

// `deal` on the default domain go.example.com and on de.example.com.
std::shared_ptr<const domain::Snapshot> two_domains() {
    domain::Snapshot::Builder b(1, {tailscale()}, {}, "test",
                                domain::SysSeconds{std::chrono::seconds{1'795'968'000}}, 4);
    b.domains(
        {{"go.example.com", true, ""}, {"de.example.com", false, "https://de.example.com/x"}});
    domain::Link on_default = make_link("deal", "https://tailscale.com/deal");
    on_default.id = 1;
    domain::Link on_de = make_link("deal", "https://tailscale.com/angebot");
    on_de.id = 2;
    on_de.domain = "de.example.com";
    domain::Link stray = make_link("stray");
    stray.id = 3;
    stray.domain = "nl.example.com";
    b.add(std::move(on_default));
    b.add(std::move(on_de));
    b.add(std::move(stray));
    return b.finish({});
}

TEST_CASE("one slug on two domains: each domain finds its own link, by a host in any case",
          "[domains][snapshot]") {
    auto s = two_domains();
    REQUIRE(s->link_count() == 2);
    REQUIRE(s->rejected().size() == 1);  // a link on a domain that is not defined
    CHECK(s->rejected()[0].find("unknown domain nl.example.com") != std::string::npos);
    CHECK(s->has_domains());
    CHECK(s->domain_of("go.example.com") == 0);
    std::uint16_t de = s->domain_of("DE.example.COM");
    REQUIRE(de == 1);
    CHECK(s->domain_of("nl.example.com") == domain::Snapshot::kUnknownDomain);
    CHECK(s->domain_of("") == domain::Snapshot::kUnknownDomain);
    const domain::LinkEntry* mine = s->find("deal", domain::Snapshot::hash_of("deal"), 0);
    const domain::LinkEntry* theirs = s->find("deal", domain::Snapshot::hash_of("deal", de), de);
    REQUIRE(mine != nullptr);
    REQUIRE(theirs != nullptr);
    CHECK(mine->id == 1);
    CHECK(theirs->id == 2);
    CHECK(s->find("deal")->id == 1);
    CHECK(s->domains()[de].not_found == "https://de.example.com/x");
    CHECK(s->link(*theirs).domain == "de.example.com");
    CHECK(s->link(*mine).domain.empty());
    // A scheduled code's rebuild keeps the domains.
    auto later = s->at(domain::SysSeconds{std::chrono::seconds{1'795'968'100}});
    CHECK(later->domain_of("de.example.com") == de);
    CHECK(later->find("deal", domain::Snapshot::hash_of("deal", de), de)->id == 2);
}

TEST_CASE("without domains nothing is looked up: every link is on the default domain",
          "[domains][snapshot]") {
    auto s = refgate::testing::make_snapshot({tailscale()}, {make_link("deal")});
    CHECK_FALSE(s->has_domains());
    CHECK(s->domain_of("go.example.com") == domain::Snapshot::kUnknownDomain);
    CHECK(s->find("deal") != nullptr);
}

TEST_CASE("the snapshot file keeps the domains and each link's domain", "[domains][snapshot]") {
    auto s = two_domains();
    std::string text;
    codec::write_snapshot_json(*s, [&](std::string_view piece) { text.append(piece); });
    auto back = codec::read_snapshot_json(text, {});
    REQUIRE(back->link_count() == 2);
    std::uint16_t de = back->domain_of("de.example.com");
    REQUIRE(de != domain::Snapshot::kUnknownDomain);
    CHECK(back->domain_of("go.example.com") == 0);
    CHECK(back->domains()[de].not_found == "https://de.example.com/x");
    CHECK(back->find("deal", domain::Snapshot::hash_of("deal", de), de)->id == 2);
    CHECK(back->find("deal")->id == 1);
}

}  // namespace domains_snapshot_test
