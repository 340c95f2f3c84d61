// The sender's spill file: what it could not hand to the store at stop, replayed at the next start
// with the same batch ids.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "refgate/clicks/click_pipeline.hpp"
#include "refgate/runtime/log.hpp"

namespace refgate::clicks {

void ClickSender::spill() {
    std::size_t keys = 0;
    for (const auto& b : in_flight_) keys += b.counts.size();
    keys += pending_.size();
    if (keys == 0) return;
    if (options_.spill_file.empty()) {
        runtime::log::error(
            "clicks_lost_at_stop",
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
    bool written = false;
    {
        // Counts are the business's own figures: owner-only, like the snapshot file.
        ::close(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
        ::chmod(tmp.c_str(), 0600);
        std::ofstream out(tmp, std::ios::trunc);
        out << doc.dump();
        out.flush();
        out.close();
        written = !out.fail();
    }
    // A partial file (the disk full) is removed: it would hold the space and never be read.
    if (!written || std::rename(tmp.c_str(), options_.spill_file.c_str()) != 0) {
        ::unlink(tmp.c_str());
        runtime::log::error("clicks_lost_at_stop",
                            {{"keys", keys}, {"detail", "cannot write the spill file"}});
        return;
    }
    runtime::log::warn("clicks_spilled", {{"keys", keys}, {"path", options_.spill_file}});
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
                domain::CounterKey key;
                if (!domain::CounterKey::parse_field(field, key)) {
                    // Only refgate writes this file; a field it cannot read is lost, loudly.
                    stats_.dropped_clicks.fetch_add(delta.get<std::uint64_t>(),
                                                    std::memory_order_relaxed);
                    runtime::log::error("spill_field_unreadable", {{"path", options_.spill_file}});
                    continue;
                }
                batch.counts.emplace_back(key, delta.get<std::uint64_t>());
            }
            keys += batch.counts.size();
            if (!batch.counts.empty()) in_flight_.push_back(std::move(batch));
        }
        in_flight_keys_indexed_ = false;
        runtime::log::info("clicks_spill_loaded", {{"keys", keys}, {"path", options_.spill_file}});
        // The file stays until the store has confirmed every batch in it; the batches keep their
        // ids, so sending them again after a crash cannot double them.
        spill_on_disk_ = true;
    } catch (const std::exception& e) {
        runtime::log::error("spill_file_unreadable",
                            {{"path", options_.spill_file}, {"error", e.what()}});
    }
}

}  // namespace refgate::clicks
