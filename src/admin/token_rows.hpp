#pragma once

// Token rows inside a caller's transaction, shared by the CLI and the admin API's store. Every
// change writes its audit row in the same transaction.

#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "refgate/admin/tokens.hpp"

namespace refgate::admin {

// Returns the new token text. Throws std::invalid_argument on a bad name or a name that already
// names a live token.
std::string insert_token(pqxx::transaction_base& tx, const std::string& actor,
                         const std::string& name, Role role);
// Every token (name empty), or the live token of that name.
std::vector<TokenInfo> select_tokens(pqxx::transaction_base& tx, const std::string& name);
// False when no live token has that name.
bool mark_revoked(pqxx::transaction_base& tx, const std::string& actor, const std::string& name);

}  // namespace refgate::admin
