// Keys:
//   refgate:bucket:<id>     hash  field "batch:<batch id>" -> lines "link|day|channel|class n"
//                                 (older buckets: field "link|day|channel|class" -> clicks)
//   refgate:buckets         set   ids of buckets not yet flushed
//   refgate:bucket:last     the newest bucket id written (never goes back)
//   refgate:bucket:closed   buckets with an id <= this are closed: nothing is added to them
//   refgate:batch:<id>      marks an instance's batch as applied (expires after a day)
//   refgate:hll:<day>:<link>  HyperLogLog of a link's unique samples on a day
//   refgate:hll:dirty       set   "<day>:<link>" of HyperLogLogs changed since the flusher looked
//   refgate:salt:<day>      the day's salt, shared by every instance
//   refgate:live:s:<slot>   hash  field "batch:<batch id>" -> lines "link n": a batch's human
//                                 clicks, in the 10-second slot it reached Redis (kept 330 s)
//   refgate:live:h:<hour>   hash  class name -> clicks that reached Redis in that hour (kept 50 h)

#include "refgate/clicks/redis_bucket_store.hpp"

#include <algorithm>
#include <charconv>
#include <iterator>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "random_hex.hpp"
#include "redis_scripts.hpp"
#include "refgate/clicks/bucket_format.hpp"
#include "refgate/clicks/reply_readers.hpp"
#include "refgate/clicks/resp.hpp"
#include "refgate/domain/click_classifier.hpp"
#include "refgate/domain/stats_report.hpp"
#include "refgate/domain/string_hash.hpp"
#include "refgate/runtime/background_thread.hpp"

namespace refgate::clicks {
namespace {

constexpr std::int64_t kDaySeconds = 86'400;
constexpr std::int64_t kHllTtlSeconds = kUniqueRetentionDays * kDaySeconds;
// PFCOUNTs sent in one pipeline when many links' estimates are asked for.
constexpr std::size_t kEstimatesPerPipeline = 4'096;
// A salt outlives its day by an hour: an instance whose clock lags still finds it.
constexpr std::int64_t kSaltGraceSeconds = 3'600;
// A bucket is read in HSCAN replies of about this size (a batch field of 10,000 counts is a few
// hundred KiB; buckets in the older form have many small fields).
constexpr std::size_t kBucketReplyBytes = 256 * 1024;

// Fewer replicas acknowledged the writes than asked for.
class Unreplicated : public redis::RedisError {
  public:
    using redis::RedisError::RedisError;
};

std::string bucket_key(std::int64_t id) { return "refgate:bucket:" + std::to_string(id); }

// The value a reader found in a reply, or a RedisError saying what was wrong with it.
template <typename T>
T take(ReplyRead<T> read, const char* what) {
    if (auto* problem = std::get_if<ReplyProblem>(&read))
        throw redis::RedisError(std::string(what) + ": " + problem->what);
    return std::move(std::get<T>(read));
}

class RedisBucketStore final : public BucketStore {
  public:
    explicit RedisBucketStore(RedisBucketStoreOptions options) : options_(std::move(options)) {}

    Status add_batches(std::span<const Batch> batches, std::chrono::seconds bucket) override {
        return guard([&] {
            writer_.clear();
            for (const auto& batch : batches)
                write_add_batch(writer_, scratch_, bucket.count(), batch.id, batch.counts, slicer_);
            // In the same round trip: the batches are confirmed only once on enough replicas.
            if (options_.min_replicas_acked > 0) {
                writer_.command(3).arg("WAIT").arg(std::uint64_t{options_.min_replicas_acked});
                writer_.arg(static_cast<std::uint64_t>(options_.wait_timeout.count()));
            }
            pipeline(writer_, "adding a batch");
            if (options_.min_replicas_acked > 0) check_replicated(replies_.back(), "batches");
            return Done{};
        });
    }

    Status add_samples(const std::vector<UniqueSample>& samples) override {
        return guard([&] {
            writer_.clear();
            write_add_samples(writer_, samples, kHllTtlSeconds);
            pipeline(writer_, "adding unique samples");
            return Done{};
        });
    }

    Result<SaltKey> daily_salt(std::int32_t day) override {
        return guard([&] {
            std::string key = "refgate:salt:" + domain::format_day(day);
            std::string expires_at = std::to_string(
                (static_cast<std::int64_t>(day) + 1) * kDaySeconds + kSaltGraceSeconds);
            auto replies = connection().pipeline(
                {{"SET", key, random_hex(16), "NX", "EXAT", expires_at}, {"GET", key}});
            return take(read_salt(replies[1]), "reading the daily salt");
        });
    }

    Result<Durability> durability() override {
        return guard([&] {
            auto& redis = connection();
            if (durability_) return *durability_;
            auto replies = redis.pipeline(
                {{"CONFIG", "GET", "appendonly"}, {"CONFIG", "GET", "maxmemory-policy"}});
            // A server that will not say (CONFIG renamed away) is "not known", not a fault.
            auto appendonly = read_config_value(replies[0], "appendonly");
            auto policy = read_config_value(replies[1], "maxmemory-policy");
            Durability d;
            d.known = appendonly.index() == 0 && policy.index() == 0;
            if (d.known) {
                d.appendonly = std::get<std::string>(appendonly);
                d.eviction_policy = std::get<std::string>(policy);
            }
            durability_ = d;
            return d;
        });
    }

    Result<ClosedBuckets> close_buckets(std::chrono::seconds bucket,
                                        bool include_current) override {
        return guard([&] {
            auto reply = checked(
                connection().command({"EVAL", kCloseScript, "0", std::to_string(bucket.count()),
                                      include_current ? "1" : "0"}),
                "closing buckets");
            auto closed = take(read_closed_buckets(reply), "closing buckets");
            // The "closed" fence and every batch before it are on the replicas before a flush
            // relies on them: a promoted replica cannot add to a bucket that is flushed.
            if (options_.min_replicas_acked > 0) {
                check_replicated(
                    connection().command({"WAIT", std::to_string(options_.min_replicas_acked),
                                          std::to_string(options_.wait_timeout.count())}),
                    "closed buckets");
            }
            return closed;
        });
    }

    Result<BucketCounts> read_bucket(std::int64_t id) override {
        return guard([&] { return read_bucket_counts(id); });
    }

    Status delete_bucket(std::int64_t id) override {
        return guard([&] {
            auto replies = connection().pipeline(
                {{"DEL", bucket_key(id)}, {"SREM", "refgate:buckets", std::to_string(id)}});
            for (const auto& r : replies) checked(r, "deleting a bucket");
            return Done{};
        });
    }

    Result<std::vector<std::int64_t>> pending_buckets() override {
        return guard([&] {
            auto members =
                checked(connection().command({"SMEMBERS", "refgate:buckets"}), "listing buckets");
            return take(read_bucket_ids(members), "listing buckets");
        });
    }

    Result<std::vector<UniqueEstimate>> take_changed_estimates(std::size_t max) override {
        return guard([&] {
            auto& redis = connection();
            auto popped =
                checked(redis.command({"SPOP", "refgate:hll:dirty", std::to_string(max)}), "SPOP");
            auto out = take(read_changed_members(popped), "SPOP");
            std::vector<redis::Command> counts;
            char member[kMaxHllMember];
            for (const auto& e : out)
                counts.push_back({"PFCOUNT", "refgate:hll:" + std::string(hll_member(
                                                                  e.day, e.link_id, member))});
            if (counts.empty()) return out;
            auto replies = redis.pipeline(counts);
            std::size_t kept = 0;
            // An estimate Redis would not count (the key gone meanwhile) is left out.
            for (std::size_t i = 0; i < out.size(); ++i) {
                auto count = read_count(replies[i]);
                if (count.index() != 0) continue;
                out[i].estimate = std::get<std::uint64_t>(count);
                out[kept++] = out[i];
            }
            out.resize(kept);
            return out;
        });
    }

    Status mark_changed(const std::vector<UniqueEstimate>& estimates) override {
        return guard([&] {
            if (estimates.empty()) return Done{};
            redis::Command add{"SADD", "refgate:hll:dirty"};
            char member[kMaxHllMember];
            for (const auto& e : estimates) add.emplace_back(hll_member(e.day, e.link_id, member));
            checked(connection().command(add), "marking estimates");
            return Done{};
        });
    }

    Result<std::vector<std::uint64_t>> unique_estimates(
        std::int64_t link_id, const std::vector<std::int32_t>& days) override {
        return guard([&] {
            std::vector<std::uint64_t> out(days.size(), 0);
            if (days.empty()) return out;
            std::vector<redis::Command> counts;
            char member[kMaxHllMember];
            for (std::int32_t day : days) {
                counts.push_back(
                    {"PFCOUNT", "refgate:hll:" + std::string(hll_member(day, link_id, member))});
            }
            auto replies = connection().pipeline(counts);
            for (std::size_t i = 0; i < replies.size(); ++i) {
                auto count = read_count(replies[i]);
                if (count.index() == 0) out[i] = std::get<std::uint64_t>(count);
            }
            return out;
        });
    }

    // Pipelined a few thousand PFCOUNTs at a time: the overview asks for every link with
    // clicks in the last days, which one round trip per link made cost a millisecond each.
    Result<std::vector<std::vector<std::uint64_t>>> unique_estimates(
        const std::vector<std::int64_t>& links, const std::vector<std::int32_t>& days) override {
        return guard([&] {
            std::vector<std::vector<std::uint64_t>> out(links.size(),
                                                        std::vector<std::uint64_t>(days.size(), 0));
            if (days.empty()) return out;
            std::size_t per_round = std::max<std::size_t>(1, kEstimatesPerPipeline / days.size());
            char member[kMaxHllMember];
            for (std::size_t first = 0; first < links.size(); first += per_round) {
                std::size_t last = std::min(links.size(), first + per_round);
                std::vector<redis::Command> counts;
                for (std::size_t i = first; i < last; ++i) {
                    for (std::int32_t day : days)
                        counts.push_back({"PFCOUNT", "refgate:hll:" + std::string(hll_member(
                                                                          day, links[i], member))});
                }
                auto replies = connection().pipeline(counts);
                for (std::size_t r = 0; r < replies.size(); ++r) {
                    auto count = read_count(replies[r]);
                    if (count.index() == 0)
                        out[first + r / days.size()][r % days.size()] =
                            std::get<std::uint64_t>(count);
                }
            }
            return out;
        });
    }

    // Two round trips (TIME, then the slots and hours), read by the stats API at most about once
    // a second per instance (its answer is cached).
    Result<LiveCounts> live_counts() override {
        return guard([&] {
            auto& redis = connection();
            auto time = checked(redis.command({"TIME"}), "TIME");
            LiveCounts live;
            const std::string* seconds = time.elements.empty() ? nullptr : &time.elements[0].str;
            if (seconds == nullptr ||
                std::from_chars(seconds->data(), seconds->data() + seconds->size(), live.store_now)
                        .ec != std::errc{})
                throw redis::RedisError("TIME: unexpected reply");
            live.window_seconds = kLiveWindowSeconds;
            std::int64_t slot = live.store_now - live.store_now % kLiveSlotSeconds;
            std::vector<redis::Command> reads;
            for (std::int64_t s = slot - kLiveWindowSeconds + kLiveSlotSeconds; s <= slot;
                 s += kLiveSlotSeconds)
                reads.push_back({"HGETALL", "refgate:live:s:" + std::to_string(s)});
            std::size_t slots = reads.size();
            std::int64_t hour = live.store_now - live.store_now % 3'600;
            std::int64_t day_start = live.store_now - live.store_now % kDaySeconds;
            for (std::int64_t h = day_start; h <= hour; h += 3'600) {
                reads.push_back({"HGETALL", "refgate:live:h:" + std::to_string(h)});
                reads.push_back({"HGETALL", "refgate:live:h:" + std::to_string(h - kDaySeconds)});
            }
            auto replies = redis.pipeline(reads);
            std::unordered_map<std::int64_t, std::uint64_t> by_link;
            for (std::size_t i = 0; i < slots; ++i) {
                const auto& r = checked(replies[i], "reading live slots");
                for (std::size_t f = 1; f < r.elements.size(); f += 2)
                    add_live_lines(r.elements[f].str, by_link);
            }
            live.human_by_link.assign(by_link.begin(), by_link.end());
            // The hour in progress: yesterday's counted in proportion to the part of it gone.
            double part = static_cast<double>(live.store_now - hour) / 3'600.0;
            for (std::size_t i = slots; i + 1 < replies.size(); i += 2) {
                bool current = i + 2 >= replies.size();
                auto today = read_classes(checked(replies[i], "reading live hours"));
                auto before = read_classes(checked(replies[i + 1], "reading live hours"));
                for (std::size_t c = 0; c < live.today.size(); ++c) {
                    live.today[c] += today[c];
                    live.yesterday_same_hours[c] +=
                        current ? static_cast<std::uint64_t>(static_cast<double>(before[c]) * part)
                                : before[c];
                }
            }
            return live;
        });
    }

  private:
    static constexpr std::int64_t kLiveWindowSeconds = 300;
    static constexpr std::int64_t kLiveSlotSeconds = 10;

    // "42 3\n43 1\n": human clicks per link, added to `out` (a malformed line is skipped).
    static void add_live_lines(std::string_view text,
                               std::unordered_map<std::int64_t, std::uint64_t>& out) {
        while (!text.empty()) {
            auto eol = text.find('\n');
            std::string_view line = text.substr(0, eol);
            text = eol == std::string_view::npos ? std::string_view{} : text.substr(eol + 1);
            auto space = line.find(' ');
            if (space == std::string_view::npos) continue;
            std::int64_t link = 0;
            std::uint64_t clicks = 0;
            auto a = std::from_chars(line.data(), line.data() + space, link);
            auto b = std::from_chars(line.data() + space + 1, line.data() + line.size(), clicks);
            if (a.ec != std::errc{} || b.ec != std::errc{}) continue;
            out[link] += clicks;
        }
    }

    // An hour's hash: class name -> clicks, in kClickClasses' order.
    static std::array<std::uint64_t, 4> read_classes(const redis::Reply& r) {
        std::array<std::uint64_t, 4> out{};
        for (std::size_t f = 0; f + 1 < r.elements.size(); f += 2) {
            for (const auto& c : domain::kClickClasses) {
                if (r.elements[f].str != c.name) continue;
                std::uint64_t n = 0;
                const std::string& v = r.elements[f + 1].str;
                if (std::from_chars(v.data(), v.data() + v.size(), n).ec == std::errc{})
                    out[static_cast<std::size_t>(c.click_class)] += n;
            }
        }
        return out;
    }

    // The adapter's boundary: a Redis failure becomes a Fault here, and only here.
    template <typename F>
    auto guard(F&& body) -> Result<decltype(body())> {
        try {
            return body();
        } catch (const Unreplicated& e) {
            return Fault{Dependency::redis, e.what(), true};
        } catch (const redis::RedisError& e) {
            return Fault{Dependency::redis, e.what()};
        }
    }

    redis::RedisConnection& connection() {
        if (!redis_ || !redis_->ok()) {
            durability_.reset();
            // A WAIT holds the reply back up to its timeout.
            auto timeout =
                options_.timeout + (options_.min_replicas_acked > 0 ? options_.wait_timeout
                                                                    : std::chrono::milliseconds{0});
            redis_ = std::make_unique<redis::RedisConnection>(options_.address, timeout);
            if (!redis_->ok()) throw redis::RedisError(redis_->error());
        }
        return *redis_;
    }

    void check_replicated(const redis::Reply& wait, const char* what) const {
        auto acked = take(read_count(checked(wait, "WAIT")), "WAIT");
        if (acked >= options_.min_replicas_acked) return;
        throw Unreplicated(std::string("WAIT: ") + std::to_string(acked) + " of " +
                           std::to_string(options_.min_replicas_acked) +
                           " replicas acknowledged the " + what);
    }

    static const redis::Reply& checked(const redis::Reply& reply, const char* what) {
        if (reply.is_error()) throw redis::RedisError(std::string(what) + ": " + reply.str);
        return reply;
    }

    void pipeline(const RespWriter& writer, const char* what) {
        connection().pipeline_raw(writer.data(), writer.commands(), replies_);
        for (const auto& reply : replies_) checked(reply, what);
    }

    // The counts of a bucket, one entry per counter field (batches summed).
    BucketCounts read_bucket_counts(std::int64_t id) {
        // A counter is in as many batch fields as batches counted it: summed here, so that each
        // appears once.
        std::unordered_map<std::string, std::uint64_t, domain::StringHash, std::equal_to<>> sums;
        sums.reserve(16'384);
        runtime::CpuSlicer slicer;
        auto add = [&](std::string_view field, std::uint64_t clicks) {
            slicer.step();
            if (auto it = sums.find(field); it != sums.end()) {
                it->second += clicks;
            } else {
                sums.emplace(field, clicks);
            }
        };
        // A field HSCAN hands over twice is read once: field names are unique (a batch id, or a
        // counter in the older form).
        std::unordered_set<std::string, domain::StringHash, std::equal_to<>> seen;
        connection().hscan(bucket_key(id), kBucketReplyBytes,
                           [&](std::string_view field, std::string_view value) {
                               if (!seen.emplace(field).second) return;
                               if (!decode_bucket_field(field, value, add)) {
                                   std::string message = "reading bucket: malformed field ";
                                   message.append(field);
                                   throw redis::RedisError(message);
                               }
                           });
        return {std::make_move_iterator(sums.begin()), std::make_move_iterator(sums.end())};
    }

    RedisBucketStoreOptions options_;
    std::unique_ptr<redis::RedisConnection> redis_;
    std::optional<Durability> durability_;  // of the current connection's server
    RespWriter writer_;
    std::string scratch_;  // a batch's counts as Redis keeps them (reused)
    std::vector<redis::Reply> replies_;
    runtime::CpuSlicer slicer_;
};

}  // namespace

std::unique_ptr<BucketStore> make_redis_bucket_store(RedisBucketStoreOptions options) {
    return std::make_unique<RedisBucketStore>(std::move(options));
}

}  // namespace refgate::clicks
