#pragma once

#include <string>
#include <vector>

namespace refgate::pg {

struct EmbeddedMigration {
    std::string name;  // "001_partners_links"
    std::string sql;
};

// sql/*.sql in name order, compiled into the binary.
const std::vector<EmbeddedMigration>& embedded_migrations();

}  // namespace refgate::pg
