#pragma once

#include <cstdint>
#include <memory>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "refgate/domain/disclosure.hpp"
#include "refgate/domain/model.hpp"
#include "refgate/domain/snapshot.hpp"

namespace refgate::pg {

struct StoredData {
    std::uint64_t version = 0;
    std::vector<domain::Partner> partners;
    std::vector<domain::Link> links;
    std::vector<domain::Disclosure> disclosures;  // every version
    std::vector<domain::CountryGroup> country_groups;
    std::vector<domain::Domain> domains;  // by host
};

std::uint64_t read_version(pqxx::transaction_base& tx);
// One consistent read of every partner, link, disclosure version and country group (call inside a
// REPEATABLE READ transaction).
StoredData read_all(pqxx::transaction_base& tx);
// The snapshot of what was read, at the system clock's time.
std::shared_ptr<const domain::Snapshot> build_snapshot(StoredData&& data,
                                                       const domain::UrlPolicy& policy,
                                                       std::string source);

}  // namespace refgate::pg
