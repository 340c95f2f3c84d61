// The targeting rules on the redirect path: allocations per redirect (none), and the CPU a
// redirect costs with rules (country lookup, platform, language, split) against one without.
//
//   refgate_micro_bench "[rules-alloc]"   the allocation count (a check)
//   refgate_micro_bench "[rules-cost]"    CPU ns per redirect with and without rules, and the ratio
//   refgate_micro_bench "[country-flat]"  the flattened country database against the .mmdb:
//                                         the same answers, ns per lookup, size
//   REFGATE_BENCH_COUNTRY_DB=FILE         the rules' country lookups in this .mmdb (default: a
//                                         fake lookup), as the database answers and flattened;
//                                         tests/bench/rules_cost.sh passes the database built
//                                         from the pinned package
#include <time.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "counting_new.hpp"
#include "refgate/clicks/click_shard.hpp"
#include "refgate/clicks/salts.hpp"
#include "refgate/domain/click_classifier.hpp"
#include "refgate/domain/counter_key.hpp"
#include "refgate/domain/snapshot.hpp"
#include "refgate/http/request.hpp"
#include "refgate/http/response.hpp"
#include "refgate/redirect/click_recorder.hpp"
#include "refgate/redirect/country_database.hpp"
#include "refgate/redirect/redirect_handler.hpp"
#include "refgate/runtime/snapshot_store.hpp"

namespace rules_bench {

using namespace refgate;
namespace http = refgate::http;

constexpr std::int64_t kNow = 1'795'968'000;  // 2026-11-29T16:00:00Z
constexpr int kLinks = 10'000;

class FixedClock final : public domain::Clock {
  public:
    std::chrono::system_clock::time_point now() const override {
        return std::chrono::system_clock::time_point(std::chrono::seconds(kNow));
    }
};

// Germany for addresses whose last byte is even, the United States otherwise.
class FakeCountries final : public domain::CountryLookup {
  public:
    domain::CountryCode country_of(const domain::IpBytes& a) const noexcept override {
        return (a[15] & 1) == 0 ? domain::country_code("DE") : domain::country_code("US");
    }
};

domain::Partner store(std::string slug, std::string domain, std::string code) {
    domain::Partner p;
    p.slug = std::move(slug);
    p.name = p.slug;
    p.ref_param = "tag";
    p.ref_code = std::move(code);
    p.allowed_domains = {std::move(domain)};
    return p;
}

// Links 1..n to amazon.com; with `rules`, each has the four rules (DE/AT store, iOS app,
// French store, a 70/30 split), so a US desktop reader in English walks all four.
std::shared_ptr<const domain::Snapshot> snapshot(bool rules) {
    std::vector<domain::Partner> partners = {store("amazon-us", "amazon.com", "picks-20"),
                                             store("amazon-de", "amazon.de", "picks-21"),
                                             store("amazon-fr", "amazon.fr", "picks-fr")};
    std::vector<domain::Link> links;
    for (int i = 1; i <= kLinks; ++i) {
        domain::Link l;
        l.id = i;
        l.slug = "rules-" + std::to_string(i);
        l.partner = "amazon-us";
        std::string dp = "/dp/B" + std::to_string(i);
        l.destination = "https://www.amazon.com" + dp;
        if (rules) {
            domain::LinkRule de{
                {"DE", "AT"}, {}, {}, "amazon-de", "https://www.amazon.de" + dp, {}};
            domain::LinkRule ios{{}, {"ios"}, {}, {}, "https://www.amazon.com" + dp + "?app=1", {}};
            domain::LinkRule fr{{}, {}, {"fr"}, "amazon-fr", "https://www.amazon.fr" + dp, {}};
            domain::LinkRule split;
            split.split = {{70, "https://www.amazon.com" + dp, ""},
                           {30, "https://www.amazon.com" + dp + "?b=1", ""}};
            l.rules = {de, ios, fr, split};
        }
        links.push_back(std::move(l));
    }
    domain::Snapshot::Builder builder(1, std::move(partners), domain::UrlPolicy{}, "bench",
                                      domain::SysSeconds{std::chrono::seconds{kNow}}, links.size());
    for (auto& l : links) builder.add(std::move(l));
    auto s = builder.finish({});
    REQUIRE(s->rejected().empty());
    return s;
}

struct World {
    runtime::SnapshotStore store;
    FixedClock clock;
    clicks::ClickShard shard;
    clicks::SaltBox salts;
    std::vector<domain::IpNetwork> trusted;
    redirect::CountryLookupBox countries;
    redirect::ClickRecorder recorder{shard, salts, domain::ClickClassifier::builtin(), trusted};
    std::unique_ptr<redirect::RedirectHandler> handler;
    std::vector<std::string> targets;
    std::vector<http::HeaderField> fields = {
        {"Host", "picks.example.com"},
        {"User-Agent",
         "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
         "Chrome/131.0.0.0 Safari/537.36"},
        {"Accept-Language", "en-GB,en;q=0.9"},
        {"Accept-Encoding", "gzip, deflate, br"}};
    http::Response response;
    std::uint8_t last_byte = 0;

    // `flat`: the country database flattened into ranges (what a process serves from once its
    // background walk is done), else looked up in the .mmdb itself.
    explicit World(bool rules, bool flat = true) {
        store.publish(snapshot(rules));
        clicks::SaltKey salt{};
        salt[0] = 7;
        salts.set(domain::utc_day(kNow), salt);
        if (const char* db = std::getenv("REFGATE_BENCH_COUNTRY_DB"); db != nullptr && *db) {
            auto database = std::make_shared<const redirect::CountryDatabase>(db);
            if (flat) {
                auto ranges = database->ranges({});
                REQUIRE(ranges);
                countries.publish(
                    std::make_shared<const domain::CountryRanges>(std::move(*ranges)));
            } else {
                countries.publish(
                    std::shared_ptr<const domain::CountryLookup>(std::move(database)));
            }
        } else {
            countries.publish(std::make_shared<const FakeCountries>());
        }
        handler = std::make_unique<redirect::RedirectHandler>(
            store, clock, redirect::RedirectOptions{}, &recorder,
            redirect::TargetingSources{
                .trusted_proxies = &trusted, .salts = &salts, .countries = &countries});
        for (int i = 1; i <= kLinks; ++i) targets.push_back("/go/rules-" + std::to_string(i));
    }

    // Readers from many addresses (public IPv4: 100.64 + i), so lookups and split draws vary.
    int send(std::string_view target) {
        http::Request r;
        r.method = http::Method::get;
        r.method_name = "GET";
        r.target = target;
        r.fields = &fields;
        r.peer.bytes[10] = 0xff;
        r.peer.bytes[11] = 0xff;
        r.peer.bytes[12] = 81;
        r.peer.bytes[13] = 2;
        r.peer.bytes[14] = 69;
        r.peer.bytes[15] = ++last_byte;
        response.reset();
        handler->handle(r, response);
        return response.status();
    }
};

double cpu_ns() {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return double(t.tv_sec) * 1e9 + double(t.tv_nsec);
}

// CPU ns per redirect over `calls`, best of `rounds`, after a warm-up pass over every target.
double ns_per_redirect(World& w, std::uint64_t calls, int rounds) {
    for (const auto& t : w.targets) REQUIRE(w.send(t) == 302);
    double best = 1e18;
    for (int r = 0; r < rounds; ++r) {
        double start = cpu_ns();
        for (std::uint64_t n = 0; n < calls; ++n) w.send(w.targets[n % w.targets.size()]);
        best = std::min(best, (cpu_ns() - start) / double(calls));
    }
    return best;
}

TEST_CASE("a redirect through targeting rules allocates nothing", "[rules-alloc]") {
    World w(true);
    constexpr std::uint64_t kCalls = 100'000;
    // The warm-up sends the measured calls themselves (same links, same readers), so every
    // counter they touch exists in the shard: a new counter's slot is the shard's growth, not
    // the rules' cost.
    for (std::uint64_t n = 0; n < kCalls; ++n)
        REQUIRE(w.send(w.targets[n % w.targets.size()]) == 302);
    w.last_byte = 0;
    std::uint64_t before = bench::allocation_count();
    for (std::uint64_t n = 0; n < kCalls; ++n) w.send(w.targets[n % w.targets.size()]);
    std::uint64_t allocations = bench::allocation_count() - before;
    std::printf("allocations per call: %8.3f  (%llu in %llu calls)  302 through 4 rules\n",
                double(allocations) / double(kCalls), static_cast<unsigned long long>(allocations),
                static_cast<unsigned long long>(kCalls));
    CHECK(allocations == 0);
}

TEST_CASE("the CPU a redirect costs with rules against without", "[rules-cost]") {
    constexpr std::uint64_t kCalls = 200'000;
    const char* rounds_text = std::getenv("REFGATE_BENCH_ROUNDS");
    int rounds = rounds_text != nullptr ? std::max(1, std::atoi(rounds_text)) : 10;
    World plain(false);
    World mmdb(true, false);
    World flat(true, true);
    double without = ns_per_redirect(plain, kCalls, rounds);
    double with_mmdb = ns_per_redirect(mmdb, kCalls, rounds);
    double with = ns_per_redirect(flat, kCalls, rounds);
    std::printf("%-54s %10.1f\n", "CPU ns per redirect, no rules", without);
    std::printf("%-54s %10.1f\n", "CPU ns per redirect, 4 rules, country from the .mmdb",
                with_mmdb);
    std::printf("%-54s %10.1f\n", "CPU ns per redirect, 4 rules, country from its ranges", with);
    std::printf("%-54s %10.3f\n", "ratio with (.mmdb) / without", with_mmdb / without);
    std::printf("%-54s %10.3f\n", "ratio with (ranges) / without", with / without);
    std::printf("%-54s %10.1f\n", "ns added per redirect (ranges)", with - without);
}

// Addresses spread over the whole IPv4 space and over 2000::/4: unlike the redirect loop's
// readers from one /24, each lookup reaches another part of the database.
TEST_CASE("the flattened country database answers as the database, in fewer ns", "[country-flat]") {
    const char* path = std::getenv("REFGATE_BENCH_COUNTRY_DB");
    if (path == nullptr || *path == 0) {
        WARN("REFGATE_BENCH_COUNTRY_DB is not set: nothing to compare");
        return;
    }
    redirect::CountryDatabase db(path);
    double start = cpu_ns();
    auto ranges = db.ranges({});
    double walk_ms = (cpu_ns() - start) / 1e6;
    REQUIRE(ranges);
    std::mt19937_64 rng(22);
    std::vector<domain::IpBytes> addresses(1'000'000);
    for (std::size_t i = 0; i < addresses.size(); ++i) {
        domain::IpBytes& a = addresses[i];
        std::uint64_t r = rng();
        if (i % 2 == 0) {
            a[10] = a[11] = 0xff;
            for (int b = 0; b < 4; ++b) a[12 + b] = static_cast<std::uint8_t>(r >> (8 * b));
        } else {
            for (int b = 0; b < 8; ++b) a[b] = static_cast<std::uint8_t>(r >> (8 * b));
            a[0] = static_cast<std::uint8_t>(0x20 | (a[0] & 0x0f));
        }
    }
    std::size_t mismatches = 0, known = 0;
    for (const auto& a : addresses) {
        domain::CountryCode expected = db.country_of(a);
        known += expected != 0;
        mismatches += ranges->country_of(a) != expected;
    }
    auto ns_per_lookup = [&](const domain::CountryLookup& lookup) {
        std::uint64_t sum = 0;
        double t = cpu_ns();
        for (const auto& a : addresses) sum += lookup.country_of(a);
        double ns = (cpu_ns() - t) / double(addresses.size());
        CHECK(sum > 0);
        return ns;
    };
    double mmdb_ns = ns_per_lookup(db), flat_ns = ns_per_lookup(*ranges);
    std::printf("%-54s %10zu\n", "ranges (after merging neighbours, gaps included)",
                ranges->size());
    std::printf("%-54s %10.1f\n", "MiB held by the ranges and their indexes",
                double(ranges->bytes()) / (1 << 20));
    std::printf("%-54s %10.0f\n", "ms of CPU to walk and flatten the database", walk_ms);
    std::printf("%-54s %10zu / %zu\n", "addresses answered differently (of, with a country)",
                mismatches, known);
    std::printf("%-54s %10.1f\n", "ns per lookup, .mmdb (random addresses)", mmdb_ns);
    std::printf("%-54s %10.1f\n", "ns per lookup, ranges (random addresses)", flat_ns);
    CHECK(mismatches == 0);
}

}  // namespace rules_bench
