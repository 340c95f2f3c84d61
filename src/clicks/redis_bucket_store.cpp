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

#include "refgate/clicks/redis_bucket_store.hpp"

#include <algorithm>
#include <iterator>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "random_hex.hpp"
#include "redis_scripts.hpp"
#include "refgate/clicks/bucket_format.hpp"
#include "refgate/clicks/reply_readers.hpp"
#include "refgate/clicks/resp.hpp"
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
            std::string key = "refgate:salt:" + format_day(day);
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

  private:
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
        std::unordered_map<std::string, std::uint64_t, StringHash, std::equal_to<>> sums;
        sums.reserve(16'384);
        CpuSlicer slicer;
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
        std::unordered_set<std::string, StringHash, std::equal_to<>> seen;
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
    CpuSlicer slicer_;
};

}  // namespace

std::unique_ptr<BucketStore> make_redis_bucket_store(RedisBucketStoreOptions options) {
    return std::make_unique<RedisBucketStore>(std::move(options));
}

}  // namespace refgate::clicks
