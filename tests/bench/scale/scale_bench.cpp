// refgate_scale_bench: what N refgate instances cost one Redis, through the real bucket store.
// Each simulated instance is a thread with a store (connection) of its own that sends one batch a
// round, as a ClickSender does once per aggregation window, but back to back, so that the rounds
// Redis can take are measured, not the window. Every instance counts the same links (instances
// behind a load balancer serve the same pages), so a bucket holds N batches over one set of
// counters. Prints one JSON line: rounds per second, round latency, and Redis' own CPU time and
// bytes received per round (from INFO). tests/bench/scale_out.sh runs it and times the flush.
//
//   refgate_scale_bench --redis redis://127.0.0.1:6379/1 --instances 4 --rounds 200 --counters 1000

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "refgate/clicks/redis_bucket_store.hpp"
#include "refgate/domain/click_classifier.hpp"
#include "refgate/domain/counter_key.hpp"
#include "refgate/redis/redis_client.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using refgate::clicks::Batch;
using refgate::clicks::BatchCounts;

struct Options {
    std::string redis_url;
    int instances = 1;
    int rounds = 100;
    int counters = 1'000;
    std::string run = "scale";
};

struct RedisFigures {
    double cpu_seconds = 0;  // used_cpu_user + used_cpu_sys
    double input_bytes = 0;  // total_net_input_bytes
    bool ok = false;
};

double info_field(const std::string& info, std::string_view name) {
    auto at = info.find(std::string(name) + ":");
    if (at == std::string::npos) return 0;
    return std::strtod(info.c_str() + at + name.size() + 1, nullptr);
}

RedisFigures redis_figures(const refgate::redis::RedisAddress& address) {
    refgate::redis::RedisConnection c(address, std::chrono::seconds{5});
    RedisFigures f;
    if (!c.ok()) return f;
    auto cpu = c.command({"INFO", "cpu"});
    auto stats = c.command({"INFO", "stats"});
    f.cpu_seconds = info_field(cpu.str, "used_cpu_user") + info_field(cpu.str, "used_cpu_sys");
    f.input_bytes = info_field(stats.str, "total_net_input_bytes");
    f.ok = !cpu.is_error() && !stats.is_error();
    return f;
}

// `counters` counters over links 1.. (two channels, human): the same for every instance.
BatchCounts make_counts(int counters) {
    BatchCounts counts;
    auto today = refgate::domain::utc_day(std::chrono::duration_cast<std::chrono::seconds>(
                                              std::chrono::system_clock::now().time_since_epoch())
                                              .count());
    for (int i = 0; i < counters; ++i) {
        refgate::domain::CounterKey key(i / 2 + 1, today, refgate::domain::ClickClass::human,
                                        i % 2 == 0 ? "direct" : "newsletter");
        counts.emplace_back(key, static_cast<std::uint64_t>(i % 3 + 1));
    }
    return counts;
}

// One instance: `rounds` batches, each timed; false when a round failed.
bool run_instance(const Options& o, const refgate::redis::RedisAddress& address, int instance,
                  std::vector<double>& latencies_ms) {
    auto store = refgate::clicks::make_redis_bucket_store({address, std::chrono::seconds{10}});
    std::vector<Batch> batch(1);
    batch[0].counts = make_counts(o.counters);
    for (int round = 0; round < o.rounds; ++round) {
        batch[0].id = o.run + ":" + std::to_string(instance) + ":" + std::to_string(round);
        auto start = Clock::now();
        auto status = store->add_batches(batch, std::chrono::seconds{10});
        if (!status) return false;
        latencies_ms.push_back(
            std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    }
    return true;
}

double percentile(std::vector<double> values, double p) {
    if (values.empty()) return 0;
    std::sort(values.begin(), values.end());
    auto index = static_cast<std::size_t>(p * static_cast<double>(values.size() - 1));
    return values[index];
}

bool parse_options(int argc, char** argv, Options& o) {
    for (int i = 1; i + 1 < argc; i += 2) {
        std::string_view name = argv[i];
        std::string value = argv[i + 1];
        if (name == "--redis") {
            o.redis_url = value;
        } else if (name == "--instances") {
            o.instances = std::atoi(value.c_str());
        } else if (name == "--rounds") {
            o.rounds = std::atoi(value.c_str());
        } else if (name == "--counters") {
            o.counters = std::atoi(value.c_str());
        } else if (name == "--run") {
            o.run = value;
        } else {
            return false;
        }
    }
    return argc % 2 == 1 && !o.redis_url.empty() && o.instances > 0 && o.rounds > 0 &&
           o.counters > 0;
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    if (!parse_options(argc, argv, o)) {
        std::fprintf(stderr,
                     "usage: refgate_scale_bench --redis URL --instances N --rounds R "
                     "--counters K [--run ID]\n");
        return 2;
    }
    auto address = refgate::redis::parse_redis_url(o.redis_url);
    if (!address) {
        std::fprintf(stderr, "refgate_scale_bench: not a redis:// URL\n");
        return 2;
    }
    std::vector<std::vector<double>> latencies(static_cast<std::size_t>(o.instances));
    std::vector<char> ok(static_cast<std::size_t>(o.instances), 0);
    auto before = redis_figures(*address);
    auto start = Clock::now();
    {
        std::vector<std::jthread> threads;
        for (int i = 0; i < o.instances; ++i) {
            threads.emplace_back([&, i] {
                auto n = static_cast<std::size_t>(i);
                ok[n] = run_instance(o, *address, i, latencies[n]) ? 1 : 0;
            });
        }
    }
    double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    auto after = redis_figures(*address);
    if (std::count(ok.begin(), ok.end(), 0) > 0 || !before.ok || !after.ok) {
        std::fprintf(stderr, "refgate_scale_bench: a round failed (is Redis up?)\n");
        return 1;
    }
    std::vector<double> all;
    for (const auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
    double rounds = static_cast<double>(all.size());
    std::printf(
        "{\"instances\": %d, \"rounds_per_instance\": %d, \"counters\": %d, \"seconds\": %.4f, "
        "\"rounds_per_s\": %.1f, \"p50_ms\": %.3f, \"p99_ms\": %.3f, "
        "\"redis_cpu_us_per_round\": %.1f, \"redis_in_bytes_per_round\": %.0f}\n",
        o.instances, o.rounds, o.counters, seconds, rounds / seconds, percentile(all, 0.5),
        percentile(all, 0.99), (after.cpu_seconds - before.cpu_seconds) * 1e6 / rounds,
        (after.input_bytes - before.input_bytes) / rounds);
    return 0;
}
