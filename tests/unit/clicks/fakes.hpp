#pragma once

// In-memory stand-ins for Redis and PostgreSQL with the semantics the pipeline relies on (a batch
// id is applied once; bucket ids come from the store's clock and never go back or into a closed
// bucket; a transaction's writes appear only on commit), and knobs for the faults of DESIGN.md §3.

#include <algorithm>
#include <map>
#include <memory>
#include <set>

#include "refgate/clicks/bucket_store.hpp"
#include "refgate/clicks/count_sink.hpp"

namespace refgate::clicks::test {

using Fields = std::map<std::string, std::uint64_t>;

class FakeBucketStore final : public BucketStore {
  public:
    // Knobs.
    bool down = false;             // every call fails, nothing changes
    int lost_replies = 0;          // add_batches applies, then fails (the reply was lost)
    int unreplicated = 0;          // add_batches applies, then WAIT finds too few replicas
    int failed_deletes = 0;        // delete_bucket fails, the bucket stays
    std::int64_t now = 1'000'000;  // the store's clock (unix s)

    // What it holds.
    std::map<std::int64_t, Fields> buckets;
    std::set<std::string> applied_batches;
    std::int64_t last = 0, closed = -1;
    std::map<std::int32_t, clicks::SaltKey> salts;
    std::map<std::pair<std::int64_t, std::int32_t>, std::set<std::uint64_t>> samples;
    std::set<std::pair<std::int64_t, std::int32_t>> changed;
    int add_calls = 0;

    // Sums of every field over every bucket.
    Fields totals() const {
        Fields out;
        for (const auto& [id, fields] : buckets)
            for (const auto& [field, n] : fields) out[field] += n;
        return out;
    }

    Status add_batches(std::span<const Batch> batches, std::chrono::seconds bucket) override {
        ++add_calls;
        if (down) return fault("down");
        for (const auto& batch : batches) {
            if (!applied_batches.insert(batch.id).second) continue;
            std::int64_t b = now - now % bucket.count();
            if (b < last) b = last;
            if (b <= closed) b = closed + bucket.count();
            last = b;
            for (const auto& [key, delta] : batch.counts) buckets[b][key.field()] += delta;
        }
        if (lost_replies > 0) {
            --lost_replies;
            return fault("reply lost");
        }
        if (unreplicated > 0) {
            --unreplicated;
            return Fault{Dependency::redis, "WAIT: 0 of 1 replicas", true};
        }
        return done();
    }

    Status add_samples(const std::vector<clicks::UniqueSample>& list) override {
        if (down) return fault("down");
        for (const auto& s : list) {
            if (samples[{s.link_id, s.day}].insert(s.hash).second)
                changed.insert({s.link_id, s.day});
        }
        return done();
    }

    Result<clicks::SaltKey> daily_salt(std::int32_t day) override {
        if (down) return fault("down");
        auto [it, created] = salts.try_emplace(day);
        if (created) it->second.fill(static_cast<std::uint8_t>(day % 251));
        return it->second;
    }

    Result<Durability> durability() override {
        if (down) return fault("down");
        return Durability{true, "yes", "noeviction"};
    }

    Result<ClosedBuckets> close_buckets(std::chrono::seconds bucket,
                                        bool include_current) override {
        if (down) return fault("down");
        std::int64_t current = std::max(now - now % bucket.count(), last);
        closed = std::max(closed, include_current ? current : current - 1);
        ClosedBuckets out{now, {}};
        for (const auto& [id, fields] : buckets)
            if (id <= closed) out.ids.push_back(id);
        return out;
    }

    Result<BucketCounts> read_bucket(std::int64_t id) override {
        if (down) return fault("down");
        BucketCounts out;
        if (auto it = buckets.find(id); it != buckets.end())
            out.assign(it->second.begin(), it->second.end());
        return out;
    }

    Status delete_bucket(std::int64_t id) override {
        if (down) return fault("down");
        if (failed_deletes > 0) {
            --failed_deletes;
            return fault("connection lost before DEL");
        }
        buckets.erase(id);
        return done();
    }

    Result<std::vector<std::int64_t>> pending_buckets() override {
        if (down) return fault("down");
        std::vector<std::int64_t> ids;
        for (const auto& [id, fields] : buckets) ids.push_back(id);
        return ids;
    }

    Result<std::vector<UniqueEstimate>> take_changed_estimates(std::size_t max) override {
        if (down) return fault("down");
        std::vector<UniqueEstimate> out;
        while (!changed.empty() && out.size() < max) {
            auto [link, day] = *changed.begin();
            changed.erase(changed.begin());
            out.push_back({link, day, samples[{link, day}].size()});
        }
        return out;
    }

    Status mark_changed(const std::vector<UniqueEstimate>& estimates) override {
        if (down) return fault("down");
        for (const auto& e : estimates) changed.insert({e.link_id, e.day});
        return done();
    }

    Result<std::vector<std::uint64_t>> unique_estimates(
        std::int64_t link_id, const std::vector<std::int32_t>& days) override {
        if (down) return fault("down");
        std::vector<std::uint64_t> out;
        for (auto day : days) out.push_back(samples[{link_id, day}].size());
        return out;
    }

  private:
    static Fault fault(const char* what) { return Fault{Dependency::redis, what}; }
};

// PostgreSQL's side: what is committed, and a transaction that stages its writes.
struct SinkState {
    std::set<std::int64_t> flushed;        // refgate_flushed_buckets
    std::map<std::int64_t, Fields> early;  // refgate_early_bucket_fields
    Fields counts;                         // refgate_click_counts, by counter field
    std::map<std::pair<std::int64_t, std::int32_t>, std::uint64_t> estimates;
    bool lock_held = false;
    bool lock_held_elsewhere = false;
    int failed_commits = 0;  // commit fails (the process died before it), nothing applied
    // The commit is applied but its reply is lost (the connection broke during COMMIT): the
    // flusher sees a failure whose outcome it cannot know.
    int lost_commit_replies = 0;
    bool down = false;
};

class FakeCountTransaction final : public CountTransaction {
  public:
    explicit FakeCountTransaction(SinkState& state) : state_(state), staged_(state) {}

    Result<bool> record_bucket(std::int64_t bucket, std::size_t, std::uint64_t) override {
        return staged_.flushed.insert(bucket).second;
    }
    Result<BucketCounts> early_counts(std::int64_t bucket) override {
        auto it = staged_.early.find(bucket);
        if (it == staged_.early.end()) return BucketCounts{};
        return BucketCounts(it->second.begin(), it->second.end());
    }
    Status remember_early_counts(std::int64_t bucket, const BucketCounts& counts) override {
        for (const auto& [field, n] : counts) {
            auto& kept = staged_.early[bucket][field];
            kept = std::max(kept, n);
        }
        return done();
    }
    Result<AddedCounts> add_counts(std::int64_t, const BucketCounts& counts) override {
        AddedCounts added;
        for (const auto& [field, n] : counts) {
            staged_.counts[field] += n;
            ++added.counters;
            added.clicks += n;
        }
        return added;
    }
    Status commit() override {
        if (state_.failed_commits > 0) {
            --state_.failed_commits;
            return Fault{Dependency::postgres, "connection lost before COMMIT"};
        }
        staged_.lock_held = state_.lock_held;
        int lost = state_.lost_commit_replies;
        staged_.lost_commit_replies = lost > 0 ? lost - 1 : 0;
        state_ = staged_;
        if (lost > 0) return Fault{Dependency::postgres, "connection lost during COMMIT"};
        return done();
    }

  private:
    SinkState& state_;
    SinkState staged_;
};

class FakeCountSink final : public CountSink {
  public:
    SinkState state;

    std::uint64_t total() const {
        std::uint64_t sum = 0;
        for (const auto& [field, n] : state.counts) sum += n;
        return sum;
    }

    Result<bool> try_lock() override {
        if (state.down) return fault();
        if (state.lock_held_elsewhere) return false;
        state.lock_held = true;
        return true;
    }
    void unlock() override { state.lock_held = false; }
    Result<std::unique_ptr<CountTransaction>> begin() override {
        if (state.down) return fault();
        return std::unique_ptr<CountTransaction>(std::make_unique<FakeCountTransaction>(state));
    }
    Status forget_early_counts_before(std::int64_t bucket) override {
        if (state.down) return fault();
        std::erase_if(state.early, [&](const auto& entry) { return entry.first < bucket; });
        return done();
    }
    Status set_unique_estimates(const std::vector<UniqueEstimate>& estimates) override {
        if (state.down) return fault();
        for (const auto& e : estimates) state.estimates[{e.link_id, e.day}] = e.estimate;
        return done();
    }

  private:
    static Fault fault() { return Fault{Dependency::postgres, "down"}; }
};

}  // namespace refgate::clicks::test
