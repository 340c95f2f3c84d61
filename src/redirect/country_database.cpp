#include "refgate/redirect/country_database.hpp"

#include <maxminddb.h>

#include "mmdb_lookup.hpp"

namespace refgate {
namespace {

CountryCode code_of(const MMDB_entry_data_s& data) noexcept {
    if (!data.has_data || data.type != MMDB_DATA_TYPE_UTF8_STRING || data.data_size != 2) return 0;
    return country_code(std::string_view(data.utf8_string, 2));
}

}  // namespace

CountryDatabase::CountryDatabase(const std::string& path) : db_(std::make_unique<MMDB_s>()) {
    mmdb_open(path, "country database", *db_);
}

CountryDatabase::~CountryDatabase() { MMDB_close(db_.get()); }

CountryCode CountryDatabase::country_of(const IpBytes& address) const noexcept {
    MMDB_lookup_result_s result = mmdb_lookup(*db_, address);
    if (!result.found_entry) return 0;
    MMDB_entry_data_s data{};
    if (MMDB_get_value(&result.entry, &data, "country", "iso_code", nullptr) == MMDB_SUCCESS) {
        if (CountryCode code = code_of(data)) return code;
    }
    data = MMDB_entry_data_s{};
    if (MMDB_get_value(&result.entry, &data, "country_code", nullptr) == MMDB_SUCCESS)
        return code_of(data);
    return 0;
}

std::string CountryDatabase::describe() const { return mmdb_describe(*db_); }

}  // namespace refgate
