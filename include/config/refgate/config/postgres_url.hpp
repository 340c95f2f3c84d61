#pragma once

// What refgate reads from and adds to a libpq connection URI
// (postgresql://[user[:password]@][host[:port]][,host[:port]...][/dbname][?key=value&...]): the
// hosts it names (several for a primary and its standbys) and its query parameters. Only what
// refgate needs; libpq parses the whole URI again when it connects.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace refgate::config {

// The hosts of the URI, each as written (host, host:port or [v6]:port); a `host=` parameter,
// which libpq takes over the authority, counts instead. An empty authority is one host (the local
// socket). Nullopt: not a postgresql:// or postgres:// URI, or an empty entry or a port that is
// no number from 1 to 65535 in the host list.
std::optional<std::vector<std::string>> postgres_url_hosts(std::string_view url);

// The value of a query parameter (as written, not decoded); nullopt when the URI has none.
std::optional<std::string> postgres_url_parameter(std::string_view url, std::string_view key);

// The URI with `key=value` added to its query, unless it already has that key.
std::string with_postgres_url_default(std::string url, std::string_view key,
                                      std::string_view value);

}  // namespace refgate::config
