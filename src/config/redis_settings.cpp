// The Redis settings beyond the connection group: the URL's syntax (plain or through sentinels),
// the sentinels' password and replica acknowledgement (WAIT).

#include <boost/url/parse.hpp>
#include <boost/url/url_view.hpp>
#include <variant>

#include "refgate/redis/sentinel_url.hpp"
#include "setting.hpp"

namespace refgate::config {

bool valid_redis_url(const std::string& value) {
    // redis://[[user]:password@]host:port[/db]; the adapter parses it again, this only rejects
    // nonsense early.
    if (value.rfind("rediss://", 0) == 0) {
        throw ConfigError(
            "REFGATE_REDIS_URL (redis_url): rediss:// is not supported: hiredis 0.14 has no TLS. "
            "Run a local TLS proxy (stunnel or HAProxy) and give its redis:// address");
    }
    if (value.starts_with(redis::kSentinelScheme)) {
        auto parsed = redis::parse_sentinel_url(value);
        if (auto* error = std::get_if<std::string>(&parsed)) {
            throw ConfigError("invalid REFGATE_REDIS_URL (redis_url) '" + redact_secrets(value) +
                              "': " + *error);
        }
        return true;
    }
    auto parsed = boost::urls::parse_uri(value);
    if (!parsed || parsed->scheme() != "redis" || parsed->host().empty() || parsed->has_query() ||
        parsed->has_fragment())
        return false;
    if (parsed->has_port() && parsed->port_number() == 0) return false;
    std::string path = parsed->path();
    if (path.empty() || path == "/") return true;
    unsigned db = 0;
    return parse_uint<unsigned>(path.substr(1), db, 0, 1024);
}

std::vector<Setting> redis_settings() {
    return {
        {"redis_sentinel_password", "REFGATE_REDIS_SENTINEL_PASSWORD",
         [](Config& c, const std::string& v) {
             c.redis_ha.sentinel_password = v;
             return true;
         },
         "the sentinels' password (empty: none)",
         [](const Config& c) {
             return std::string(c.redis_ha.sentinel_password.empty() ? "" : "***");
         }},
        {"redis_min_replicas_acked", "REFGATE_REDIS_MIN_REPLICAS_ACKED",
         [](Config& c, const std::string& v) {
             return parse_uint<unsigned>(v, c.redis_ha.min_replicas_acked, 0, 16);
         },
         "an integer from 0 (no WAIT) to 16",
         [](const Config& c) { return std::to_string(c.redis_ha.min_replicas_acked); }},
        {"redis_wait_timeout_ms", "REFGATE_REDIS_WAIT_TIMEOUT_MS",
         [](Config& c, const std::string& v) {
             unsigned ms = 0;
             if (!parse_uint<unsigned>(v, ms, 1, 60'000)) return false;
             c.redis_ha.wait_timeout = std::chrono::milliseconds{ms};
             return true;
         },
         "milliseconds, 1 to 60000",
         [](const Config& c) { return std::to_string(c.redis_ha.wait_timeout.count()); }},
    };
}

}  // namespace refgate::config
