#include "refgate/redirect/country_database.hpp"

#include <maxminddb.h>

#include <condition_variable>
#include <mutex>

#include "mmdb_lookup.hpp"
#include "refgate/runtime/background_thread.hpp"
#include "refgate/runtime/log.hpp"

namespace refgate::redirect {
namespace {

domain::CountryCode code_of(const MMDB_entry_data_s& data) noexcept {
    if (!data.has_data || data.type != MMDB_DATA_TYPE_UTF8_STRING || data.data_size != 2) return 0;
    return domain::country_code(std::string_view(data.utf8_string, 2));
}

domain::CountryCode entry_country(MMDB_entry_s& entry) noexcept {
    MMDB_entry_data_s data{};
    if (MMDB_get_value(&entry, &data, "country", "iso_code", nullptr) == MMDB_SUCCESS) {
        if (domain::CountryCode code = code_of(data)) return code;
    }
    data = MMDB_entry_data_s{};
    if (MMDB_get_value(&entry, &data, "country_code", nullptr) == MMDB_SUCCESS)
        return code_of(data);
    return 0;
}

}  // namespace

CountryDatabase::CountryDatabase(const std::string& path) : db_(std::make_unique<MMDB_s>()) {
    mmdb_open(path, "country database", *db_);
}

CountryDatabase::~CountryDatabase() { MMDB_close(db_.get()); }

domain::CountryCode CountryDatabase::country_of(const domain::IpBytes& address) const noexcept {
    MMDB_lookup_result_s result = mmdb_lookup(*db_, address);
    return result.found_entry ? entry_country(result.entry) : 0;
}

std::optional<domain::CountryRanges> CountryDatabase::ranges(std::stop_token stop) const {
    domain::RangeTableBuilder<domain::CountryCode> table;
    if (!mmdb_flatten(*db_, stop, entry_country, table)) return std::nullopt;
    table.finish();
    return domain::CountryRanges(std::move(table));
}

MmdbSource CountryDatabase::source() const noexcept {
    return {.build_epoch = db_->metadata.build_epoch, .node_count = db_->metadata.node_count};
}

std::string CountryDatabase::describe() const { return mmdb_describe(*db_); }

CountryLookupBox::~CountryLookupBox() = default;

void CountryLookupBox::publish(std::shared_ptr<const CountryDatabase> database) {
    flatten_ = {};  // a walk of an older database stops before this one is published
    const CountryDatabase* db = database.get();
    runtime::Published<domain::CountryLookup>::publish(std::move(database));
    if (db == nullptr) return;
    auto delay = std::exchange(delay_, std::chrono::milliseconds{0});
    flatten_ = std::jthread([this, db, delay](std::stop_token stop) {
        runtime::become_background_thread("country_ranges", runtime::BackgroundPriority::low);
        if (delay.count() > 0) {
            std::mutex mutex;
            std::unique_lock lock(mutex);
            std::condition_variable_any().wait_for(lock, stop, delay, [] { return false; });
        }
        // Held here so that the walk reads a database that is still open.
        auto held = current();
        if (stop.stop_requested() || held.get() != db) return;
        auto start = std::chrono::steady_clock::now();
        auto ranges = db->ranges(stop);
        if (!ranges) {
            if (!stop.stop_requested())
                runtime::log::error("country_ranges_failed",
                                    {{"detail",
                                      "the country database's tree is malformed; each lookup "
                                      "walks it"}});
            return;
        }
        std::size_t size = ranges->size(), bytes = ranges->bytes();
        if (!publish_over(std::make_shared<const domain::CountryRanges>(std::move(*ranges)), db))
            return;
        auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
            std::chrono::steady_clock::now() - start);
        runtime::log::info(
            "country_ranges",
            {{"form", "built"}, {"ranges", size}, {"bytes", bytes}, {"ms", ms.count()}});
        // The walk's working memory is freed but stays resident until trimmed.
        runtime::trim_heap();
    });
}

void CountryLookupBox::publish_ranges(std::shared_ptr<const domain::CountryLookup> ranges) {
    flatten_ = {};
    runtime::Published<domain::CountryLookup>::publish(std::move(ranges));
}

}  // namespace refgate::redirect
