#pragma once

#include <cstdint>
#include <pqxx/pqxx>
#include <vector>

#include "refgate/domain/disclosure.hpp"
#include "refgate/domain/model.hpp"

namespace refgate::pg {

struct StoredData {
    std::uint64_t version = 0;
    std::vector<Partner> partners;
    std::vector<Link> links;
    std::vector<Disclosure> disclosures;  // every version
};

std::uint64_t read_version(pqxx::transaction_base& tx);
// One consistent read of every partner, link and disclosure version (call inside a REPEATABLE
// READ transaction).
StoredData read_all(pqxx::transaction_base& tx);

}  // namespace refgate::pg
