#include <fcntl.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "refgate/clicks/click_pipeline.hpp"
#include "refgate/clicks/redis_buckets.hpp"
#include "refgate/runtime/background_thread.hpp"
#include "refgate/runtime/log.hpp"

namespace refgate::clicks {
namespace {

constexpr std::size_t kMaxFieldsPerBatch = 10'000;
constexpr std::chrono::seconds kSaltCheckInterval{30};
constexpr std::chrono::seconds kDropLogInterval{10};
constexpr std::chrono::milliseconds kRedisTimeout{1'000};
// Batch vectors kept for reuse once Redis confirmed their batch.
constexpr std::size_t kMaxSpareVectors = 8;

std::string random_hex(std::size_t bytes) {
    std::vector<unsigned char> buf(bytes);
    if (RAND_bytes(buf.data(), static_cast<int>(buf.size())) != 1)
        throw std::runtime_error("RAND_bytes failed");
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    for (unsigned char c : buf) {
        out.push_back(kHex[c >> 4]);
        out.push_back(kHex[c & 0xf]);
    }
    return out;
}

bool parse_salt(const std::string& hex, SaltKey& out) {
    if (hex.size() != 32) return false;
    for (std::size_t i = 0; i < 16; ++i) {
        unsigned value = 0;
        if (std::sscanf(hex.c_str() + 2 * i, "%2x", &value) != 1) return false;
        out[i] = static_cast<std::uint8_t>(value);
    }
    return true;
}

std::int64_t now_seconds() {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

}  // namespace

ClickSender::ClickSender(ClickSenderOptions options, std::vector<ClickShard*> shards,
                         SaltBox& salts, HealthState& health, ClickStats& stats)
    : options_(std::move(options)),
      shards_(std::move(shards)),
      salts_(salts),
      health_(health),
      stats_(stats),
      instance_id_(random_hex(8)) {}

ClickSender::~ClickSender() { stop(); }

void ClickSender::start() {
    replay_spill();
    thread_ = std::thread([this] {
        become_background_thread("rg-click-sender", BackgroundPriority::idle);
        run();
    });
}

void ClickSender::stop() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    if (!thread_.joinable()) return;
    thread_.join();
    // The last round runs here, not on the sender's thread: that one runs at idle priority, and a
    // saturated machine must not hold up the shutdown (and with it the spill) behind other work.
    bool sent = send_round();
    if (!sent || !in_flight_.empty() || !pending_.empty()) spill();
}

std::string ClickSender::next_batch_id() {
    return instance_id_ + ":" + std::to_string(++sequence_);
}

redis::RedisConnection* ClickSender::connection() {
    if (!redis_ || !redis_->ok()) {
        redis_ = std::make_unique<redis::RedisConnection>(options_.redis, kRedisTimeout);
        if (!redis_->ok()) return nullptr;
        config_checked_ = false;
    }
    return redis_.get();
}

void ClickSender::run() {
    std::unique_lock lock(mutex_);
    while (!stopping_) {
        lock.unlock();
        send_round();
        lock.lock();
        wake_.wait_for(lock, options_.window, [this] { return stopping_; });
    }
}

bool ClickSender::send_round() {
    collect();
    bool sent = send_all();
    if (sent && spill_on_disk_ && in_flight_.empty()) {
        std::remove(options_.spill_file.c_str());
        spill_on_disk_ = false;
        log::info("clicks_spill_replayed", {{"path", options_.spill_file}});
    }
    return sent;
}

// Moves the shards' counts into pending_, within the bound on distinct keys waiting for Redis
// (those in pending_ and in unconfirmed batches, each counted once).
void ClickSender::collect() {
    drained_.counts.clear();
    drained_.samples.clear();
    drained_.samples_dropped = 0;
    for (ClickShard* shard : shards_) shard->drain(drained_);
    std::span<const std::pair<CounterKey, std::uint64_t>> drained(drained_.counts);
    for (std::size_t i = 0; i < drained.size(); i += CpuSlicer::kStepsPerSlice) {
        auto part = drained.subspan(
            i, std::min<std::size_t>(CpuSlicer::kStepsPerSlice, drained.size() - i));
        stats_.link_clicks.add(part);
        slicer_.step(static_cast<std::uint32_t>(part.size()));
    }
    std::uint64_t dropped = 0;
    if (in_flight_.empty() && pending_.empty() &&
        drained_.counts.size() <= options_.max_pending_keys) {
        // The usual window: Redis took everything before, so what was drained becomes the next
        // batch as it is, without a hash map of its keys (that is only needed while Redis lags).
        seal(drained_.counts);
    } else {
        index_in_flight_keys();
        for (const auto& [key, delta] : drained_.counts) {
            auto it = pending_.find(key);
            if (it != pending_.end()) {
                it->second += delta;
                continue;
            }
            bool known = in_flight_keys_.count(key) != 0;
            if (!known && in_flight_keys_.size() + pending_new_keys_ >= options_.max_pending_keys) {
                dropped += delta;
                continue;
            }
            pending_.emplace(key, delta);
            if (!known) ++pending_new_keys_;
        }
    }
    if (dropped > 0) {
        stats_.dropped_clicks.fetch_add(dropped, std::memory_order_relaxed);
        auto now = std::chrono::steady_clock::now();
        if (now >= next_drop_log_) {
            log::error("clicks_dropped", {{"clicks", dropped},
                                          {"total", stats_.dropped_clicks.load()},
                                          {"max_pending_keys", options_.max_pending_keys}});
            next_drop_log_ = now + kDropLogInterval;
        }
    }
    stats_.dropped_samples.fetch_add(drained_.samples_dropped, std::memory_order_relaxed);
    samples_.insert(samples_.end(), drained_.samples.begin(), drained_.samples.end());
    std::size_t in_flight_keys = in_flight_keys_.size();
    if (!in_flight_keys_indexed_) {
        in_flight_keys = 0;
        for (const auto& batch : in_flight_) in_flight_keys += batch.counts.size();
    }
    stats_.pending_keys.store(in_flight_keys + pending_new_keys_, std::memory_order_relaxed);
}

// A batch keeps its id and content until Redis confirms it; new batches are made only once the
// previous ones are confirmed, so a retry never mixes old and new counts.
void ClickSender::seal_pending() {
    if (!in_flight_.empty() || pending_.empty()) return;
    auto counts = take_spare();
    counts.assign(pending_.begin(), pending_.end());
    seal(counts);
    spare_counts_.push_back(std::move(counts));
    pending_.clear();
    pending_new_keys_ = 0;
}

// Turns `counts` into batches (of at most kMaxFieldsPerBatch) after the unconfirmed ones; leaves
// `counts` empty. Vectors are swapped with spare ones, so a steady window allocates nothing.
void ClickSender::seal(std::vector<std::pair<CounterKey, std::uint64_t>>& counts) {
    if (counts.empty()) return;
    if (counts.size() <= kMaxFieldsPerBatch) {
        Batch batch{next_batch_id(), take_spare()};
        batch.counts.clear();
        batch.counts.swap(counts);
        in_flight_.push_back(std::move(batch));
    } else {
        for (std::size_t i = 0; i < counts.size(); i += kMaxFieldsPerBatch) {
            Batch batch{next_batch_id(), take_spare()};
            auto last = std::min(counts.size(), i + kMaxFieldsPerBatch);
            batch.counts.assign(counts.begin() + static_cast<std::ptrdiff_t>(i),
                                counts.begin() + static_cast<std::ptrdiff_t>(last));
            in_flight_.push_back(std::move(batch));
        }
        counts.clear();
    }
    in_flight_keys_indexed_ = false;
}

std::vector<std::pair<CounterKey, std::uint64_t>> ClickSender::take_spare() {
    if (spare_counts_.empty()) return {};
    auto counts = std::move(spare_counts_.back());
    spare_counts_.pop_back();
    counts.clear();
    return counts;
}

// Redis applied every unconfirmed batch: their vectors are kept for the next windows.
void ClickSender::confirm_in_flight() {
    for (auto& batch : in_flight_) {
        if (spare_counts_.size() < kMaxSpareVectors)
            spare_counts_.push_back(std::move(batch.counts));
    }
    in_flight_.clear();
    in_flight_keys_.clear();
    in_flight_keys_indexed_ = true;
}

void ClickSender::index_in_flight_keys() {
    if (in_flight_keys_indexed_) return;
    in_flight_keys_.clear();
    for (const auto& batch : in_flight_) {
        for (const auto& entry : batch.counts) in_flight_keys_.insert(entry.first);
    }
    in_flight_keys_indexed_ = true;
}

bool ClickSender::send_all() {
    redis::RedisConnection* redis = connection();
    if (redis == nullptr) {
        if (health_.redis.exchange(DependencyState::down) != DependencyState::down) {
            log::warn("redis_unavailable", {{"error", redis_ ? redis_->error() : "no connection"}});
        }
        stats_.redis_errors.fetch_add(1, std::memory_order_relaxed);
        stats_.dropped_samples.fetch_add(samples_.size(), std::memory_order_relaxed);
        samples_.clear();
        return false;
    }
    try {
        if (!config_checked_) check_redis_config(*redis);
        refresh_salts(*redis);
        // Unconfirmed batches first, then what came since, in a second round trip.
        for (int round = 0; round < 2 && (!in_flight_.empty() || !pending_.empty()); ++round) {
            seal_pending();
            writer_.clear();
            for (const auto& batch : in_flight_) {
                write_add_batch(writer_, batch_text_, options_.bucket.count(), batch.id,
                                batch.counts, slicer_);
            }
            auto sent_at = std::chrono::steady_clock::now();
            redis->pipeline_raw(writer_.data(), writer_.commands(), replies_);
            stats_.redis_latency.observe(std::chrono::steady_clock::now() - sent_at);
            for (const auto& reply : replies_) {
                if (reply.is_error()) throw redis::RedisError("adding a batch: " + reply.str);
            }
            stats_.batches_sent.fetch_add(in_flight_.size(), std::memory_order_relaxed);
            confirm_in_flight();
        }
        send_samples(*redis);
        stats_.pending_keys.store(pending_new_keys_, std::memory_order_relaxed);
        health_.redis = DependencyState::up;
        return true;
    } catch (const redis::RedisError& e) {
        stats_.redis_errors.fetch_add(1, std::memory_order_relaxed);
        if (health_.redis.exchange(DependencyState::down) != DependencyState::down) {
            log::warn("redis_unavailable", {{"error", e.what()}});
        }
        stats_.dropped_samples.fetch_add(samples_.size(), std::memory_order_relaxed);
        samples_.clear();
        return false;
    }
}

void ClickSender::send_samples(redis::RedisConnection& redis) {
    if (samples_.empty()) return;
    // Grouped by (day, link): one PFADD per HyperLogLog; a repeated hash adds nothing.
    auto order = [](const UniqueSample& a, const UniqueSample& b) {
        return std::tie(a.day, a.link_id, a.hash) < std::tie(b.day, b.link_id, b.hash);
    };
    auto same = [](const UniqueSample& a, const UniqueSample& b) {
        return a.day == b.day && a.link_id == b.link_id && a.hash == b.hash;
    };
    // Known samples are dropped before sorting: under steady traffic most are repeats, and the
    // sort is then over the few new ones.
    samples_.erase(std::remove_if(samples_.begin(), samples_.end(),
                                  [this](const UniqueSample& s) {
                                      slicer_.step();
                                      return sent_samples_.contains(s);
                                  }),
                   samples_.end());
    if (samples_.empty()) return;
    std::sort(samples_.begin(), samples_.end(), order);
    samples_.erase(std::unique(samples_.begin(), samples_.end(), same), samples_.end());
    writer_.clear();
    write_add_samples(writer_, samples_);
    redis.pipeline_raw(writer_.data(), writer_.commands(), replies_);
    for (const auto& reply : replies_) {
        if (reply.is_error()) throw redis::RedisError("adding unique samples: " + reply.str);
    }
    for (const auto& s : samples_) sent_samples_.insert(s);
    samples_.clear();
}

void ClickSender::refresh_salts(redis::RedisConnection& redis) {
    auto now = std::chrono::steady_clock::now();
    if (now < next_salt_check_) return;
    std::int32_t today = utc_day(now_seconds());
    // Today's and tomorrow's: the I/O threads never wait for a salt at midnight.
    for (std::int32_t day : {today, today + 1}) {
        std::string key = "refgate:salt:" + format_day(day);
        // Shared by every instance: the first one creates it; it expires an hour after its day.
        std::string expires_at =
            std::to_string((static_cast<std::int64_t>(day) + 1) * 86'400 + 3'600);
        auto replies =
            redis.pipeline({{"SET", key, random_hex(16), "NX", "EXAT", expires_at}, {"GET", key}});
        SaltKey salt;
        if (replies[1].type == redis::Reply::Type::string && parse_salt(replies[1].str, salt)) {
            salts_.set(day, salt);
        } else {
            throw redis::RedisError("reading the daily salt failed");
        }
    }
    next_salt_check_ = now + kSaltCheckInterval;
}

void ClickSender::check_redis_config(redis::RedisConnection& redis) {
    config_checked_ = true;
    auto replies =
        redis.pipeline({{"CONFIG", "GET", "appendonly"}, {"CONFIG", "GET", "maxmemory-policy"}});
    auto value = [](const redis::Reply& r) {
        return r.elements.size() == 2 ? r.elements[1].str : std::string();
    };
    std::string aof = value(replies[0]);
    std::string policy = value(replies[1]);
    if (replies[0].is_error() || replies[1].is_error()) {
        stats_.redis_config_risky = true;
        log::warn("redis_config_unknown",
                  {{"detail", "CONFIG GET refused; cannot check AOF and eviction policy"}});
        return;
    }
    bool risky = aof != "yes" || policy != "noeviction";
    stats_.redis_config_risky = risky;
    if (risky) {
        log::error("redis_config_risky", {{"appendonly", aof},
                                          {"maxmemory_policy", policy},
                                          {"detail",
                                           "counts can be lost: run Redis with appendonly yes and "
                                           "maxmemory-policy noeviction"}});
    }
}

void ClickSender::spill() {
    std::size_t keys = 0;
    for (const auto& b : in_flight_) keys += b.counts.size();
    keys += pending_.size();
    if (keys == 0) return;
    if (options_.spill_file.empty()) {
        log::error("clicks_lost_at_stop",
                   {{"keys", keys}, {"detail", "Redis unreachable and no spill file set"}});
        return;
    }
    nlohmann::json doc = nlohmann::json::array();
    for (const auto& b : in_flight_) {
        nlohmann::json counts = nlohmann::json::object();
        for (const auto& [key, delta] : b.counts) {
            // A key drained from two shards is in a batch twice: the file holds the sum.
            auto& slot = counts[key.field()];
            slot = (slot.is_null() ? 0 : slot.get<std::uint64_t>()) + delta;
        }
        doc.push_back({{"id", b.id}, {"counts", counts}});
    }
    if (!pending_.empty()) {
        nlohmann::json counts = nlohmann::json::object();
        for (const auto& [key, delta] : pending_) counts[key.field()] = delta;
        doc.push_back({{"id", next_batch_id()}, {"counts", counts}});
    }
    std::string tmp = options_.spill_file + ".tmp";
    {
        // Counts are the business's own figures: owner-only, like the snapshot file.
        ::close(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
        ::chmod(tmp.c_str(), 0600);
        std::ofstream out(tmp, std::ios::trunc);
        out << doc.dump();
        out.flush();
        if (!out) {
            log::error("clicks_lost_at_stop",
                       {{"keys", keys}, {"detail", "cannot write the spill file"}});
            return;
        }
    }
    std::rename(tmp.c_str(), options_.spill_file.c_str());
    log::warn("clicks_spilled", {{"keys", keys}, {"path", options_.spill_file}});
}

void ClickSender::replay_spill() {
    if (options_.spill_file.empty()) return;
    std::ifstream in(options_.spill_file);
    if (!in) return;
    try {
        auto doc = nlohmann::json::parse(in);
        std::size_t keys = 0;
        for (const auto& b : doc) {
            Batch batch{b.at("id").get<std::string>(), {}};
            for (const auto& [field, delta] : b.at("counts").items()) {
                CounterKey key;
                if (!CounterKey::parse_field(field, key)) {
                    // Only refgate writes this file; a field it cannot read is lost, loudly.
                    stats_.dropped_clicks.fetch_add(delta.get<std::uint64_t>(),
                                                    std::memory_order_relaxed);
                    log::error("spill_field_unreadable", {{"path", options_.spill_file}});
                    continue;
                }
                batch.counts.emplace_back(key, delta.get<std::uint64_t>());
            }
            keys += batch.counts.size();
            if (!batch.counts.empty()) in_flight_.push_back(std::move(batch));
        }
        in_flight_keys_indexed_ = false;
        log::info("clicks_spill_loaded", {{"keys", keys}, {"path", options_.spill_file}});
        // The file stays until Redis has confirmed every batch in it; the batches keep their ids,
        // so sending them again after a crash cannot double them.
        spill_on_disk_ = true;
    } catch (const std::exception& e) {
        log::error("spill_file_unreadable", {{"path", options_.spill_file}, {"error", e.what()}});
    }
}

}  // namespace refgate::clicks
