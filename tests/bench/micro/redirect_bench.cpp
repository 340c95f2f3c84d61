// Microbenchmarks of the redirect hot path, and a count of the allocations it makes.
//
//   refgate_micro_bench                 all benchmarks and checks
//   refgate_micro_bench "[alloc]"       only the allocation count
//   refgate_micro_bench "[placements-cost]"
//                                       CPU ns per redirect of a partner with subid_param and
//                                       channel_codes against one without, and the ratio
//   refgate_micro_bench "[domains-cost]"
//                                       CPU ns per redirect with two branded domains (the link on
//                                       the second, picked by Host) against none, and the ratio
//   REFGATE_BENCH_OUT=DIR               also writes DIR/alloc.json and DIR/oneshot.json
#define CATCH_CONFIG_ENABLE_BENCHMARKING
#include <time.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <vector>

#include "counting_new.hpp"
#include "refgate/clicks/channel_cap.hpp"
#include "refgate/clicks/click_shard.hpp"
#include "refgate/clicks/salts.hpp"
#include "refgate/codec/snapshot_file.hpp"
#include "refgate/domain/click_classifier.hpp"
#include "refgate/domain/counter_key.hpp"
#include "refgate/domain/location.hpp"
#include "refgate/domain/snapshot.hpp"
#include "refgate/http/request.hpp"
#include "refgate/http/response.hpp"
#include "refgate/redirect/click_recorder.hpp"
#include "refgate/redirect/redirect_handler.hpp"
#include "refgate/runtime/snapshot_store.hpp"

namespace {

using namespace refgate;
namespace http = refgate::http;

constexpr std::int64_t kNow = 1'795'968'000;  // 2026-11-29T16:00:00Z
constexpr int kPartners = 10;
constexpr int kLinks = 100'000;

constexpr const char* kChrome =
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/131.0.0.0 Safari/537.36";
constexpr const char* kSlackbot = "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)";

class FixedClock final : public domain::Clock {
  public:
    std::chrono::system_clock::time_point now() const override {
        return std::chrono::system_clock::time_point(std::chrono::seconds(kNow));
    }
};

std::string slug(int i) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "bench-%06d", i);
    return buf;
}

domain::Partner partner(int p) {
    domain::Partner out;
    out.id = p + 1;
    out.slug = "partner" + std::to_string(p);
    out.name = "Partner " + std::to_string(p);
    out.ref_param = "ref";
    out.ref_code = "picks42";
    out.allowed_domains = {"partner" + std::to_string(p) + ".example.com"};
    out.extra_params = {{"utm_medium", "affiliate"}};
    return out;
}

std::string destination(int i) {
    return "https://www.partner" + std::to_string(i % kPartners) + ".example.com/products/item-" +
           std::to_string(i) + "?plan=pro#top";
}

// With `placements`, every partner has a sub-ID parameter and three channel codes, the last of
// which matches the channel the benchmarks send (the longest walk to a code).
std::vector<domain::Partner> partners(bool placements = false) {
    std::vector<domain::Partner> out;
    for (int p = 0; p < kPartners; ++p) out.push_back(partner(p));
    if (placements) {
        for (auto& p : out) {
            p.subid_param = "subId1";
            p.channel_codes = {
                {"podcast", "picks-pod"}, {"blog-*", "picks-blog"}, {"newsletter-*", "picks-nl"}};
        }
    }
    return out;
}

// Links 1..n as tests/bench/bench.py generates them; link n+1 passes utm_* through.
std::vector<domain::Link> links(int n) {
    std::vector<domain::Link> out;
    out.reserve(n + 1);
    for (int i = 1; i <= n + 1; ++i) {
        domain::Link l;
        l.id = i;
        l.slug = slug(i);
        l.partner = "partner" + std::to_string(i % kPartners);
        l.destination = destination(i);
        l.utm_passthrough = i == n + 1;
        out.push_back(std::move(l));
    }
    return out;
}

// The 100k-link snapshot, built once for the whole run (one with placements, one without).
const std::shared_ptr<const domain::Snapshot>& big_snapshot(bool placements = false) {
    auto build = [](bool with) {
        auto s = domain::Snapshot::build(1, partners(with), links(kLinks), {}, "bench");
        REQUIRE(s->rejected().empty());
        REQUIRE(s->link_count() == static_cast<std::size_t>(kLinks) + 1);
        return s;
    };
    static const auto plain = build(false);
    if (!placements) return plain;
    static const auto placed = build(true);
    return placed;
}

// The same 100k links with two branded domains (issue 46): go.example.com the default, and
// de.example.com, which the even links are on.
const std::shared_ptr<const domain::Snapshot>& domains_snapshot() {
    static const auto built = [] {
        auto input = links(kLinks);
        domain::Snapshot::Builder b(1, partners(false), {}, "bench",
                                    domain::SysSeconds{std::chrono::seconds{kNow}}, input.size());
        b.domains({{"go.example.com", true, ""}, {"de.example.com", false, ""}});
        for (auto& l : input) {
            if (l.id % 2 == 0) l.domain = "de.example.com";
            b.add(std::move(l));
        }
        auto s = b.finish({});
        REQUIRE(s->rejected().empty());
        REQUIRE(s->has_domains());
        return s;
    }();
    return built;
}

// Issue 44: 10,000 links with a fallback, the odd ones with a click cap (max_human_clicks 100),
// the even ones switched to their fallback by link health (auto_fallback, the default branch).
constexpr int kFallbackLinks = 10'000;
const std::shared_ptr<const domain::Snapshot>& fallback_snapshot() {
    static const auto built = [] {
        auto input = links(kFallbackLinks);
        input.pop_back();  // not the utm_passthrough link
        for (auto& l : input) {
            l.fallback =
                "https://www.partner" + std::to_string(l.id % kPartners) + ".example.com/fallback";
            if (l.id % 2 == 1) {
                l.max_human_clicks = 100;
            } else {
                l.auto_fallback = true;
                l.fallback_switches = {{"default", "status", "", 0}};
            }
        }
        auto s = domain::Snapshot::build(1, partners(false), std::move(input), {}, "bench");
        REQUIRE(s->rejected().empty());
        REQUIRE(s->caps().size() == kFallbackLinks / 2);
        REQUIRE(s->serving_fallback() == kFallbackLinks / 2);
        return s;
    }();
    return built;
}

// A handler over the big snapshot with a recorder, as the server's I/O thread has it, and a
// browser-like request.
struct World {
    runtime::SnapshotStore store;
    FixedClock clock;
    clicks::ClickShard shard;
    clicks::SaltBox salts;
    std::vector<domain::IpNetwork> trusted;
    redirect::ClickRecorder recorder{shard, salts, domain::ClickClassifier::builtin(), trusted};
    redirect::RedirectHandler handler;
    redirect::RedirectHandler handler_without_recorder;
    std::vector<std::string> targets;
    std::vector<http::HeaderField> fields;
    http::Response response;

    explicit World(const char* user_agent = kChrome, std::string_view query = {},
                   bool placements = false)
        : handler(store, clock, redirect::RedirectOptions{}, &recorder),
          handler_without_recorder(store, clock, redirect::RedirectOptions{}) {
        store.publish(big_snapshot(placements));
        clicks::SaltKey salt{};
        salt[0] = 7;
        salts.set(domain::utc_day(kNow), salt);
        targets.reserve(kLinks);
        for (int i = 1; i <= kLinks; ++i) {
            std::string t = "/go/" + slug(i);
            if (!query.empty()) t.append("?").append(query);
            targets.push_back(std::move(t));
        }
        fields = {{"Host", "picks.example.com"},
                  {"User-Agent", user_agent},
                  {"Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"},
                  {"Accept-Language", "en-GB,en;q=0.9"},
                  {"Accept-Encoding", "gzip, deflate, br"},
                  {"Referer", "https://picks.example.com/best-vpn"},
                  {"Connection", "keep-alive"}};
    }

    http::Request request(std::string_view target, http::Method method = http::Method::get) {
        http::Request r;
        r.method = method;
        r.method_name = method == http::Method::head ? "HEAD" : "GET";
        r.target = target;
        r.fields = &fields;
        r.peer.bytes[10] = 0xff;
        r.peer.bytes[11] = 0xff;
        r.peer.bytes[12] = 192;
        r.peer.bytes[13] = 0;
        r.peer.bytes[14] = 2;
        r.peer.bytes[15] = 1;
        return r;
    }

    // Serves the two-domain snapshot, every request naming de.example.com in its Host field.
    void on_second_domain() {
        store.publish(domains_snapshot());
        fields[0].value = "de.example.com";
    }
    // Serves fallback_snapshot() with the caps of all its capped links reached, as the cap
    // worker publishes them.
    void on_fallbacks() {
        const auto& snapshot = fallback_snapshot();
        store.publish(snapshot);
        auto flags = std::make_shared<runtime::CapFlags>(*snapshot);
        std::unordered_map<std::int64_t, std::uint64_t> totals;
        for (const auto& cap : snapshot->caps()) totals[cap.link_id] = 100;
        REQUIRE(flags->apply(totals) == snapshot->caps().size());
        store.cap_flags().publish(std::move(flags));
    }
    // The targets of the first `n` links whose id has `parity` (1: odd, 0: even).
    std::vector<std::string> targets_of(int parity, int n) const {
        std::vector<std::string> out;
        for (int i = 1; i <= n; ++i)
            if (i % 2 == parity) out.push_back(targets[static_cast<std::size_t>(i - 1)]);
        return out;
    }
    // The targets of the links on the second domain (the even ones).
    std::vector<std::string> even_targets() const {
        std::vector<std::string> out;
        for (std::size_t i = 1; i < targets.size(); i += 2) out.push_back(targets[i]);
        return out;
    }

    // One request the way Session::answer() makes it: the response is reset and reused.
    int send(redirect::RedirectHandler& h, std::string_view target,
             http::Method method = http::Method::get) {
        response.reset();
        h.handle(request(target, method), response);
        return response.status();
    }
};

std::string out_dir() {
    const char* dir = std::getenv("REFGATE_BENCH_OUT");
    return dir == nullptr ? std::string{} : std::string(dir);
}

}  // namespace

TEST_CASE("build_location", "[micro]") {
    domain::Partner p = partner(12345 % kPartners);
    std::string dest = destination(12345);
    REQUIRE(domain::build_location(dest, p) ==
            "https://www.partner5.example.com/products/item-12345?plan=pro&ref=picks42&"
            "utm_medium=affiliate#top");
    BENCHMARK("build_location: destination + ref + 1 extra parameter") {
        return domain::build_location(dest, p);
    };
    BENCHMARK("build_location: utm_passthrough with 3 incoming parameters") {
        return domain::build_location(dest, p, true,
                                      "utm_source=news&utm_campaign=black-friday&x=1");
    };
}

TEST_CASE("ClickClassifier::builtin().classify", "[micro]") {
    const domain::ClickClassifier& c = domain::ClickClassifier::builtin();
    domain::ClickSignals browser{.user_agent = kChrome};
    domain::ClickSignals slack{.user_agent = kSlackbot};
    domain::ClickSignals prefetch{.user_agent = kChrome, .sec_purpose = "prefetch;prerender"};
    std::string long_agent(600, 'x');
    domain::ClickSignals overlong{.user_agent = long_agent};
    REQUIRE(c.classify(browser) == domain::ClickClass::human);
    REQUIRE(c.classify(slack) == domain::ClickClass::bot);
    REQUIRE(c.classify(prefetch) == domain::ClickClass::prefetch);
    BENCHMARK("classify: Chrome user agent (human, 111 bytes)") { return c.classify(browser); };
    BENCHMARK("classify: Slackbot user agent (bot)") { return c.classify(slack); };
    BENCHMARK("classify: Sec-Purpose prefetch") { return c.classify(prefetch); };
    BENCHMARK("classify: 600-byte user agent (512 scanned)") { return c.classify(overlong); };
}

TEST_CASE("Snapshot::find over 100k links", "[micro]") {
    const domain::Snapshot& s = *big_snapshot();
    std::vector<std::string> slugs;
    slugs.reserve(kLinks);
    for (int i = 1; i <= kLinks; ++i) slugs.push_back(slug(i));
    // A fixed pseudo-random walk, so that each call looks up another slug (no cache luck).
    std::vector<std::uint32_t> order(kLinks);
    std::uint32_t x = 12345;
    for (auto& o : order) {
        x = x * 1664525u + 1013904223u;
        o = x % kLinks;
    }
    std::size_t i = 0;
    REQUIRE(s.find(slugs[0]) != nullptr);
    BENCHMARK("Snapshot::find: hit, random slug of 100k") {
        i = (i + 1) % order.size();
        return s.find(slugs[order[i]]);
    };
    std::size_t j = 0;
    BENCHMARK("Snapshot::find: same slug every time") { return s.find(slugs[j]); };
    std::string missing = "no-such-link";
    BENCHMARK("Snapshot::find: miss") { return s.find(missing); };
}

TEST_CASE("the channel cap's work for a click with ?src=", "[micro]") {
    // What a click with a channel adds to one without: the identifier check of its src value
    // and the I/O thread's ChannelCap lookup (a click without src does neither).
    std::string_view tag = "newsletter-2026-48";
    BENCHMARK("looks_like_identifier: newsletter-2026-48") {
        return domain::looks_like_identifier(tag);
    };
    BENCHMARK("read_channel: src=newsletter-2026-48 after two parameters") {
        return domain::read_channel("plan=pro&utm_source=x&src=newsletter-2026-48").channel.size();
    };
    clicks::ChannelCap cap(100);
    const std::int32_t day = domain::utc_day(kNow);
    for (std::int64_t link = 1; link <= 10'000; ++link) cap.admit(link, day, tag);
    std::int64_t link = 0;
    BENCHMARK("ChannelCap::admit: a channel seen before, 10k links") {
        link = link % 10'000 + 1;
        return cap.admit(link, day, tag).capped;
    };
}

TEST_CASE("RedirectHandler::handle end to end", "[micro]") {
    World w;
    REQUIRE(w.send(w.handler, w.targets[0]) == 302);
    std::size_t i = 0;
    BENCHMARK("handle: 302, browser, counted (ClickRecorder), 100k links") {
        i = (i + 7919) % w.targets.size();
        return w.send(w.handler, w.targets[i]);
    };
    std::size_t k = 0;
    BENCHMARK("handle: 302, not counted (no recorder), 100k links") {
        k = (k + 7919) % w.targets.size();
        return w.send(w.handler_without_recorder, w.targets[k]);
    };
    World bot(kSlackbot);
    std::size_t j = 0;
    BENCHMARK("handle: 302, Slackbot, counted") {
        j = (j + 7919) % bot.targets.size();
        return bot.send(bot.handler, bot.targets[j]);
    };
    World tagged(kChrome, "src=newsletter-2026-48");
    std::size_t t = 0;
    BENCHMARK("handle: 302, browser, ?src= channel, counted, 100k links") {
        t = (t + 7919) % tagged.targets.size();
        return tagged.send(tagged.handler, tagged.targets[t]);
    };
    World placed(kChrome, "src=newsletter-2026-48", true);
    REQUIRE(placed.send(placed.handler, placed.targets[0]) == 302);
    REQUIRE(placed.response.headers().find("subId1=") != std::string::npos);
    std::size_t u = 0;
    BENCHMARK("handle: 302, browser, ?src= channel, sub-ID + channel code, counted, 100k links") {
        u = (u + 7919) % placed.targets.size();
        return placed.send(placed.handler, placed.targets[u]);
    };
    BENCHMARK("handle: 404 unknown slug") { return w.send(w.handler, "/go/no-such-link"); };
    std::string utm = "/go/" + slug(kLinks + 1) + "?utm_source=news&utm_campaign=bf";
    REQUIRE(w.send(w.handler, utm) == 302);
    BENCHMARK("handle: 302, utm_passthrough link rebuilt per click") {
        return w.send(w.handler, utm);
    };
}

namespace {

struct AllocCase {
    std::string name;
    std::uint64_t calls = 0;
    std::uint64_t allocations = 0;
    bool expect_zero = true;
    double per_call() const { return calls == 0 ? 0 : double(allocations) / double(calls); }
};

// Allocations of `calls` handle() calls over `targets`, after two warm-up passes over all of them
// (so that every counter key exists and every buffer has grown).
AllocCase count_allocations(std::string name, World& w, redirect::RedirectHandler& h,
                            const std::vector<std::string>& targets, std::uint64_t calls,
                            http::Method method = http::Method::get, int expected_status = 302) {
    for (int pass = 0; pass < 2; ++pass) {
        for (const auto& t : targets) REQUIRE(w.send(h, t, method) == expected_status);
    }
    AllocCase c{std::move(name)};
    std::uint64_t before = bench::allocation_count();
    int bad = 0;
    for (std::uint64_t n = 0; n < calls; ++n) {
        if (w.send(h, targets[n % targets.size()], method) != expected_status) ++bad;
    }
    c.allocations = bench::allocation_count() - before;
    c.calls = calls;
    REQUIRE(bad == 0);
    return c;
}

}  // namespace

TEST_CASE("the steady-state redirect path allocates nothing", "[alloc]") {
    // The counter itself must count: a std::string that outgrows SSO allocates.
    auto before = bench::allocation_count();
    std::string* probe = new std::string(100, 'x');
    delete probe;
    REQUIRE(bench::allocation_count() - before >= 2);

    constexpr std::uint64_t kCalls = 200'000;
    std::vector<AllocCase> cases;
    {
        World w;
        std::vector<std::string> some(w.targets.begin(), w.targets.begin() + 10'000);
        cases.push_back(count_allocations("302, browser (human, unique sample), counted, 10k links",
                                          w, w.handler, some, kCalls));
        cases.push_back(count_allocations("HEAD 302 (bot), counted, 10k links", w, w.handler, some,
                                          kCalls, http::Method::head));
        cases.push_back(count_allocations("302, not counted (no recorder), 10k links", w,
                                          w.handler_without_recorder, some, kCalls));
        cases.push_back(count_allocations("404 unknown slug", w, w.handler, {"/go/no-such-link"},
                                          kCalls, http::Method::get, 404));
        auto utm =
            count_allocations("302, utm_passthrough link with utm_* query (rebuilt)", w, w.handler,
                              {"/go/" + slug(kLinks + 1) + "?utm_source=news&utm_term=x"}, 20'000);
        utm.expect_zero = false;  // documented: the Location is built per click
        cases.push_back(utm);
    }
    {
        World w(kSlackbot, "src=newsletter-2026-48");
        std::vector<std::string> some(w.targets.begin(), w.targets.begin() + 10'000);
        cases.push_back(count_allocations("302, Slackbot, channel from ?src=, counted, 10k links",
                                          w, w.handler, some, kCalls));
    }
    {
        World w;
        cases.push_back(count_allocations("302, browser, counted, all 100k links", w, w.handler,
                                          w.targets, kCalls));
    }
    {
        // Issue 46: the domain looked up by Host, the slug on the second domain.
        World w;
        w.on_second_domain();
        auto even = w.even_targets();
        even.resize(10'000);
        cases.push_back(count_allocations("302, second branded domain by Host, counted, 10k links",
                                          w, w.handler, even, kCalls));
        cases.push_back(count_allocations("404 unknown slug on the second domain", w, w.handler,
                                          {"/go/no-such-link"}, kCalls, http::Method::get, 404));
    }
    {
        // Issue 44: a capped link answers with its fallback, as does one link health switched
        // to its fallback (auto_fallback); both counted.
        World w;
        w.on_fallbacks();
        REQUIRE(w.send(w.handler, w.targets[0]) == 302);
        REQUIRE(
            w.response.headers().find("Location: https://www.partner1.example.com/fallback\r\n") !=
            std::string::npos);
        cases.push_back(
            count_allocations("302 to the fallback, click cap reached, counted, 5k links", w,
                              w.handler, w.targets_of(1, kFallbackLinks), kCalls));
        cases.push_back(count_allocations(
            "302 to the fallback, switched by link health (auto_fallback), counted, 5k links", w,
            w.handler, w.targets_of(0, kFallbackLinks), kCalls));
    }
    {
        // Placements: the Location written per click from the snapshot's (token and code).
        World w(kChrome, "src=newsletter-2026-48", true);
        std::vector<std::string> some(w.targets.begin(), w.targets.begin() + 10'000);
        cases.push_back(count_allocations(
            "302, browser, ?src= channel, sub-ID + channel code, counted, 10k links", w, w.handler,
            some, kCalls));
    }

    nlohmann::ordered_json out = {{"calls_after_warm_up", kCalls},
                                  {"cases", nlohmann::json::array()}};
    for (const auto& c : cases) {
        std::printf("allocations per call: %8.3f  (%llu in %llu calls)  %s\n", c.per_call(),
                    static_cast<unsigned long long>(c.allocations),
                    static_cast<unsigned long long>(c.calls), c.name.c_str());
        out["cases"].push_back({{"name", c.name},
                                {"calls", c.calls},
                                {"allocations", c.allocations},
                                {"per_call", c.per_call()},
                                {"expect_zero", c.expect_zero}});
    }
    if (auto dir = out_dir(); !dir.empty()) std::ofstream(dir + "/alloc.json") << out.dump(2);
    for (const auto& c : cases) {
        INFO(c.name);
        if (c.expect_zero) CHECK(c.allocations == 0);
    }
}

namespace {

double cpu_ns() {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return double(t.tv_sec) * 1e9 + double(t.tv_nsec);
}

// CPU ns of one pass of `calls` redirects, spread over the 100k links (or `targets`).
double pass_ns(World& w, std::uint64_t calls, const std::vector<std::string>* targets = nullptr) {
    const std::vector<std::string>& list = targets != nullptr ? *targets : w.targets;
    std::size_t i = 0;
    double start = cpu_ns();
    for (std::uint64_t n = 0; n < calls; ++n) {
        i = (i + 7919) % list.size();
        w.send(w.handler, list[i]);
    }
    return (cpu_ns() - start) / double(calls);
}

}  // namespace

TEST_CASE("the CPU a redirect costs with placements against without", "[placements-cost]") {
    // Both with the same ?src= channel, counted, over 100k links; short passes alternate so
    // that a change of the machine's speed (other sessions' builds) reaches both sides alike.
    // Best of REFGATE_BENCH_ROUNDS (default 100) passes of 20,000 redirects each.
    constexpr std::uint64_t kCalls = 20'000;
    const char* rounds_text = std::getenv("REFGATE_BENCH_ROUNDS");
    int rounds = rounds_text != nullptr ? std::max(1, std::atoi(rounds_text)) : 100;
    World plain(kChrome, "src=newsletter-2026-48", false);
    World placed(kChrome, "src=newsletter-2026-48", true);
    for (World* w : {&plain, &placed}) pass_ns(*w, w->targets.size());  // every counter exists
    double without = 1e18, with = 1e18;
    for (int r = 0; r < rounds; ++r) {
        without = std::min(without, pass_ns(plain, kCalls));
        with = std::min(with, pass_ns(placed, kCalls));
    }
    std::printf("%-62s %10.1f\n", "CPU ns per redirect, partner without placements", without);
    std::printf("%-62s %10.1f\n", "CPU ns per redirect, subid_param + 3 channel_codes", with);
    std::printf("%-62s %10.3f\n", "ratio with / without", with / without);
    std::printf("%-62s %10.1f\n", "ns added per redirect", with - without);
}

TEST_CASE("the CPU a redirect costs with two branded domains against none", "[domains-cost]") {
    // The same 50k links (the even ones), counted: with no domain defined, and with two domains,
    // the links on the second, which each request's Host names (the domain lookup and the slug
    // hash mixed with the domain: issue 46's one extra lookup). Alternating short passes, best of
    // REFGATE_BENCH_ROUNDS (default 100) passes of 20,000 redirects each.
    constexpr std::uint64_t kCalls = 20'000;
    const char* rounds_text = std::getenv("REFGATE_BENCH_ROUNDS");
    int rounds = rounds_text != nullptr ? std::max(1, std::atoi(rounds_text)) : 100;
    World one;
    World two;
    two.on_second_domain();
    auto even = one.even_targets();
    for (World* w : {&one, &two}) {
        pass_ns(*w, even.size(), &even);  // every counter exists
        REQUIRE(w->send(w->handler, even[0]) == 302);
    }
    double without = 1e18, with = 1e18;
    for (int r = 0; r < rounds; ++r) {
        without = std::min(without, pass_ns(one, kCalls, &even));
        with = std::min(with, pass_ns(two, kCalls, &even));
    }
    std::printf("%-62s %10.1f\n", "CPU ns per redirect, no domain defined", without);
    std::printf("%-62s %10.1f\n", "CPU ns per redirect, two domains, link on the second", with);
    std::printf("%-62s %10.3f\n", "ratio two domains / none", with / without);
}

TEST_CASE("one-shot timings of start-up work with 100k links", "[oneshot]") {
    using Clock = std::chrono::steady_clock;
    auto ms = [](Clock::duration d) {
        return std::chrono::duration<double, std::milli>(d).count();
    };
    nlohmann::ordered_json out = nlohmann::ordered_json::object();

    auto input_partners = partners();
    auto input_links = links(kLinks);
    auto mib = [](std::int64_t bytes) { return double(bytes) / (1024.0 * 1024.0); };
    auto live_before_links = bench::live_bytes();
    {
        auto copy = links(kLinks);
        out["heap held by the 100k input Links (MiB)"] =
            mib(bench::live_bytes() - live_before_links);
    }
    auto live_before = bench::live_bytes();
    auto t0 = Clock::now();
    auto built = domain::Snapshot::build(1, input_partners, input_links, {}, "bench");
    auto t1 = Clock::now();
    out["heap held by Snapshot::build, 100k links (MiB)"] = mib(bench::live_bytes() - live_before);
    std::string file;
    codec::write_snapshot_json(*built, [&file](std::string_view piece) { file.append(piece); });
    auto t2 = Clock::now();
    auto t5 = Clock::now();
    auto read = codec::read_snapshot_json(std::string_view(file), {});
    auto t6 = Clock::now();
    REQUIRE(read->link_count() == built->link_count());
    // A scheduled code of one partner taking over: what the follower publishes at that second.
    auto scheduled_partners = input_partners;
    scheduled_partners[0].scheduled_codes = {
        {domain::SysSeconds{std::chrono::seconds{kNow + 60}}, "x"}};
    auto scheduled = domain::Snapshot::build(1, scheduled_partners, input_links, {}, "bench", {},
                                             domain::SysSeconds{std::chrono::seconds{kNow}});
    auto t7 = Clock::now();
    auto switched = scheduled->at(domain::SysSeconds{std::chrono::seconds{kNow + 60}});
    auto t8 = Clock::now();
    REQUIRE(switched->partners()[0].ref_code == "x");
    out["Snapshot::build, 100k links (validation, Locations, pages) (ms)"] = ms(t1 - t0);
    out["write_snapshot_json, 100k links (snapshot file text) (ms)"] = ms(t2 - t1);
    out["Snapshot::read_json of the snapshot file text, 100k links (ms)"] = ms(t6 - t5);
    out["Snapshot::at, one partner's scheduled code takes over (ms)"] = ms(t8 - t7);
    out["snapshot file (MiB)"] = mib(static_cast<std::int64_t>(file.size()));
    for (auto& [k, v] : out.items()) std::printf("%-66s %12.1f\n", k.c_str(), v.get<double>());
    if (auto dir = out_dir(); !dir.empty()) std::ofstream(dir + "/oneshot.json") << out.dump(2);
}
