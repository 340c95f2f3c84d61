#pragma once

// redis+sentinel://[user:password@]host1[:port],host2[:port][,...]/<master-name>[/<db>]: the
// sentinels to ask for the master of <master-name>. Boost.URL cannot parse a multi-host
// authority, so this is parsed by hand.

#include <string>
#include <variant>
#include <vector>

namespace refgate::redis {

inline constexpr const char* kSentinelScheme = "redis+sentinel://";
inline constexpr int kSentinelDefaultPort = 26379;

struct SentinelHost {
    std::string host;
    int port = kSentinelDefaultPort;
};

struct SentinelUrl {
    std::vector<SentinelHost> sentinels;  // in the order given, at least one
    std::string master_name;
    int db = 0;
    std::string user;      // for the data nodes, percent-decoded
    std::string password;  // for the data nodes, percent-decoded
};

// The URL, or why it is not one (a sentence naming the part at fault, never the password).
std::variant<SentinelUrl, std::string> parse_sentinel_url(const std::string& url);

}  // namespace refgate::redis
