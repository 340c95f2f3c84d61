#pragma once

// The stats routes of the admin API: query validation, the store call, JSON or CSV.

#include <optional>
#include <string>
#include <vector>

#include "refgate/admin/admin_handler.hpp"
#include "refgate/admin/admin_store.hpp"
#include "refgate/admin/stats_store.hpp"

namespace refgate::admin {

struct StatsQuery {
    std::optional<std::string> from;
    std::optional<std::string> to;
    std::optional<std::string> limit;
    bool csv = false;
    std::optional<std::string> by;  // top: "link" (default) or "partner"
    // top and partner (issue 46): only the links on this domain (?domain=HOST, found).
    std::optional<StatsDomain> domain;
};

struct StatsAnswer {
    int status = 200;                       // 200, 404 or 422
    std::vector<codec::FieldError> errors;  // for 422
    std::string detail;                     // for 404
    nlohmann::ordered_json json;            // for 200 unless csv
    std::string csv;                        // for 200 with csv
    bool is_csv = false;
};

constexpr std::size_t kDefaultTopLimit = 10;
constexpr std::size_t kMaxTopLimit = 100;

// Throws StoreError when the figures cannot be read. `tokens`: the admin store whose partners
// give a link's placement tokens (issue 42; none: a link's answer has no placements).
StatsAnswer answer_stats(StatsStore& store, Operation operation, const std::string& slug,
                         const StatsQuery& query, std::int32_t today, AdminStore* tokens = nullptr);

}  // namespace refgate::admin
