#include "refgate/domain/link_check_plan.hpp"

#include <catch2/catch.hpp>
#include <map>

#include "support/fake_clock.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace link_check_plan_test {

using namespace refgate;
using namespace std::chrono_literals;

namespace {

using refgate::testing::FakeMonotonicClock;

domain::IpBytes ip(const char* text) { return *domain::parse_ip(text); }

}  // namespace

TEST_CASE("the planner checks every link once per interval, spread evenly over it",
          "[linkhealth][plan]") {
    const int n = 240;
    std::vector<domain::PlanLink> links;
    for (int i = 0; i < n; ++i) links.push_back({.id = 1000 + i * 7});
    const domain::SysSeconds start{std::chrono::seconds{1'800'000'000}};
    // The first round checks the links never checked.
    for (auto id : domain::due_links(links, start, 24h)) {
        for (auto& l : links) {
            if (l.id == id) l.last_checked = start;
        }
    }
    std::map<std::int64_t, int> checks;
    std::map<int, int> per_hour;
    // A worker that plans once a minute for two days.
    for (auto t = start + 1min; t <= start + 48h; t += 1min) {
        for (auto id : domain::due_links(links, t, 24h)) {
            for (auto& l : links) {
                if (l.id == id) l.last_checked = t;
            }
            ++checks[id];
            ++per_hour[static_cast<int>((t - start - 1s) / 1h)];
        }
    }
    REQUIRE(checks.size() == n);
    for (auto& [id, count] : checks) CHECK(count == 2);
    // 240 links over 24 hours: 10 an hour, every hour.
    for (auto& [hour, count] : per_hour) CHECK((count >= 9 && count <= 11));
    CHECK(per_hour.size() == 48);
}

TEST_CASE("a pending finding is due at its confirmation time, not before", "[linkhealth][plan]") {
    const domain::SysSeconds now{std::chrono::seconds{1'800'000'000}};
    std::vector<domain::PlanLink> links{
        {.id = 1, .last_checked = now - 1min, .confirm_at = now + 59min},
        {.id = 2, .last_checked = now - 1h, .confirm_at = now}};
    CHECK(domain::due_links(links, now, 24h) == std::vector<std::int64_t>{2});
    CHECK(domain::due_links(links, now + 59min, 24h) == std::vector<std::int64_t>{1, 2});
}

TEST_CASE("one host gets at most one request per gap; other hosts are not held back",
          "[linkhealth][limiter]") {
    FakeMonotonicClock clock{std::chrono::steady_clock::time_point{1000h}};
    domain::HostRateLimiter limiter(clock, 1000ms);
    CHECK(limiter.reserve("shop.example") == 0ms);
    CHECK(limiter.reserve("shop.example") == 1000ms);
    CHECK(limiter.reserve("shop.example") == 2000ms);
    CHECK(limiter.reserve("other.example") == 0ms);
    clock.advance(2500ms);
    CHECK(limiter.reserve("shop.example") == 500ms);
    clock.advance(10s);
    CHECK(limiter.reserve("shop.example") == 0ms);
}

TEST_CASE("outbound requests may reach public addresses only", "[linkhealth][ssrf]") {
    for (const char* refused :
         {"127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1",
          "0.0.0.0", "224.0.0.1", "255.255.255.255", "::1", "::", "fe80::1", "fd00:ec2::254",
          "fc00::1", "ff02::1", "64:ff9b::a00:1"}) {
        INFO(refused);
        CHECK_FALSE(domain::public_address(ip(refused)));
    }
    for (const char* allowed : {"93.184.216.34", "8.8.8.8", "2606:4700::1111", "172.32.0.1"}) {
        INFO(allowed);
        CHECK(domain::public_address(ip(allowed)));
    }
}

}  // namespace link_check_plan_test
