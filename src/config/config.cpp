#include "refgate/config/config.hpp"

#include <algorithm>
#include <boost/url/parse.hpp>
#include <boost/url/url_view.hpp>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "refgate/config/postgres_url.hpp"
#include "refgate/domain/disclosure.hpp"
#include "refgate/runtime/log.hpp"
#include "setting.hpp"

namespace refgate::config {
namespace {

std::string millis_text(std::chrono::milliseconds ms) { return std::to_string(ms.count()); }
std::string bool_text(bool b) { return b ? "true" : "false"; }

bool parse_millis(const std::string& text, std::chrono::milliseconds& out) {
    std::int64_t value = 0;
    if (!parse_uint<std::int64_t>(text, value, 1, 86'400'000)) return false;
    out = std::chrono::milliseconds{value};
    return true;
}

// Whole seconds up to 30 days.
bool parse_seconds(const std::string& text, std::chrono::seconds& out) {
    std::int64_t value = 0;
    if (!parse_uint<std::int64_t>(text, value, 1, 2'592'000)) return false;
    out = std::chrono::seconds{value};
    return true;
}

// Like parse_millis, but 0 is allowed (it turns the feature off).
bool parse_millis_or_off(const std::string& text, std::chrono::milliseconds& out) {
    std::int64_t value = 0;
    if (!parse_uint<std::int64_t>(text, value, 0, 86'400'000)) return false;
    out = std::chrono::milliseconds{value};
    return true;
}

bool parse_bool(const std::string& text, bool& out) {
    if (text == "true" || text == "1" || text == "yes") {
        out = true;
        return true;
    }
    if (text == "false" || text == "0" || text == "no") {
        out = false;
        return true;
    }
    return false;
}

bool valid_referrer_policy(const std::string& value) {
    static const char* const kPolicies[] = {"no-referrer",
                                            "no-referrer-when-downgrade",
                                            "origin",
                                            "origin-when-cross-origin",
                                            "same-origin",
                                            "strict-origin",
                                            "strict-origin-when-cross-origin",
                                            "unsafe-url"};
    for (const char* p : kPolicies) {
        if (value == p) return true;
    }
    return false;
}

std::string join_list(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& item : items) out += (out.empty() ? "" : ",") + item;
    return out;
}

// "https://a.example, http://localhost:3000": scheme and authority only, no path or trailing slash.
std::optional<std::vector<std::string>> parse_origins(const std::string& list) {
    std::vector<std::string> origins;
    std::istringstream in(list);
    std::string item;
    while (std::getline(in, item, ',')) {
        auto first = item.find_first_not_of(" \t");
        if (first == std::string::npos) continue;
        item = item.substr(first, item.find_last_not_of(" \t") - first + 1);
        auto parsed = boost::urls::parse_absolute_uri(item);
        if (!parsed ||
            (parsed->scheme_id() != boost::urls::scheme::https &&
             parsed->scheme_id() != boost::urls::scheme::http) ||
            parsed->host().empty() || parsed->has_userinfo() || !parsed->encoded_path().empty() ||
            parsed->has_query() || parsed->has_fragment())
            return std::nullopt;
        origins.push_back(item);
    }
    return origins;
}

// Where refgate listens and which servers it uses.
std::vector<Setting> connection_settings() {
    return {
        {"listen", "REFGATE_LISTEN",
         [](Config& c, const std::string& v) {
             auto e = parse_endpoint(v);
             if (e) c.listen = *e;
             return e.has_value();
         },
         "host:port", [](const Config& c) { return c.listen.to_string(); }},
        {"admin_listen", "REFGATE_ADMIN_LISTEN",
         [](Config& c, const std::string& v) {
             auto e = parse_endpoint(v);
             if (e) c.admin_listen = *e;
             return e.has_value();
         },
         "host:port", [](const Config& c) { return c.admin_listen.to_string(); }},
        {"database_url", "REFGATE_DATABASE_URL",
         [](Config& c, const std::string& v) {
             c.database_url = v;
             return postgres_url_hosts(v).has_value();
         },
         "a postgresql:// URI, with host:port,host:port for a primary and its standbys",
         [](const Config& c) { return redact_secrets(c.database_url); }},
        {"stats_database_url", "REFGATE_STATS_DATABASE_URL",
         [](Config& c, const std::string& v) {
             c.stats_database_url = v;
             return v.empty() || postgres_url_hosts(v).has_value();
         },
         "a postgresql:// URI of a replica for the stats API (empty: REFGATE_DATABASE_URL)",
         [](const Config& c) { return redact_secrets(c.stats_database_url); }},
        {"redis_url", "REFGATE_REDIS_URL",
         [](Config& c, const std::string& v) {
             c.redis_url = v;
             return valid_redis_url(v);
         },
         "redis://host:port[/db] or redis+sentinel://host1:port,host2:port/<master-name>[/db], "
         "with :password@ or user:password@ before the host(s) when Redis asks for one",
         [](const Config& c) { return redact_secrets(c.redis_url); }},
        {"threads", "REFGATE_THREADS",
         [](Config& c, const std::string& v) { return parse_uint<unsigned>(v, c.threads, 1, 256); },
         "an integer from 1 to 256", [](const Config& c) { return std::to_string(c.threads); }},
        {"io_uring", "REFGATE_IO_URING",
         [](Config& c, const std::string& v) { return parse_bool(v, c.io_uring); },
         "true or false (false: a system call per read and send, as where io_uring is refused)",
         [](const Config& c) { return bool_text(c.io_uring); }},
    };
}

// Serving: the snapshot, redirects and the HTTP limits.
std::vector<Setting> serving_settings() {
    return {
        text_setting(
            "snapshot_file", "REFGATE_SNAPSHOT_FILE",
            [](Config& c) -> std::string& { return c.snapshot_file; },
            "a file path (empty disables the snapshot file)"),
        {"referrer_policy", "REFGATE_REFERRER_POLICY",
         [](Config& c, const std::string& v) {
             c.referrer_policy = v;
             return valid_referrer_policy(v);
         },
         "a Referrer-Policy token such as strict-origin-when-cross-origin",
         [](const Config& c) { return c.referrer_policy; }},
        {"unknown_host", "REFGATE_UNKNOWN_HOST",
         [](Config& c, const std::string& v) {
             c.reject_unknown_host = v == "reject";
             return v == "reject" || v == "default";
         },
         "default (served as the default domain) or reject (404)",
         [](const Config& c) { return std::string(c.reject_unknown_host ? "reject" : "default"); }},
        {"allow_http_destinations", "REFGATE_ALLOW_HTTP_DESTINATIONS",
         [](Config& c, const std::string& v) { return parse_bool(v, c.allow_http_destinations); },
         "true or false", [](const Config& c) { return bool_text(c.allow_http_destinations); }},
        {"max_connections", "REFGATE_MAX_CONNECTIONS",
         [](Config& c, const std::string& v) {
             return parse_uint<std::size_t>(v, c.http.max_connections, 1, 1'000'000);
         },
         "an integer from 1 to 1000000",
         [](const Config& c) { return std::to_string(c.http.max_connections); }},
        {"max_header_bytes", "REFGATE_MAX_HEADER_BYTES",
         [](Config& c, const std::string& v) {
             return parse_uint<std::size_t>(v, c.http.max_header_bytes, 1024, 65536);
         },
         "an integer from 1024 to 65536",
         [](const Config& c) { return std::to_string(c.http.max_header_bytes); }},
        {"max_target_bytes", "REFGATE_MAX_TARGET_BYTES",
         [](Config& c, const std::string& v) {
             return parse_uint<std::size_t>(v, c.http.max_target_bytes, 64, 16384);
         },
         "an integer from 64 to 16384",
         [](const Config& c) { return std::to_string(c.http.max_target_bytes); }},
        {"read_timeout_ms", "REFGATE_READ_TIMEOUT_MS",
         [](Config& c, const std::string& v) { return parse_millis(v, c.http.read_timeout); },
         "milliseconds, 1 to 86400000",
         [](const Config& c) { return millis_text(c.http.read_timeout); }},
        {"write_timeout_ms", "REFGATE_WRITE_TIMEOUT_MS",
         [](Config& c, const std::string& v) { return parse_millis(v, c.http.write_timeout); },
         "milliseconds, 1 to 86400000",
         [](const Config& c) { return millis_text(c.http.write_timeout); }},
        {"reload_interval_ms", "REFGATE_RELOAD_INTERVAL_MS",
         [](Config& c, const std::string& v) { return parse_millis(v, c.reload_interval); },
         "milliseconds, 1 to 86400000",
         [](const Config& c) { return millis_text(c.reload_interval); }},
        {"shutdown_timeout_ms", "REFGATE_SHUTDOWN_TIMEOUT_MS",
         [](Config& c, const std::string& v) { return parse_millis(v, c.shutdown_timeout); },
         "milliseconds, 1 to 86400000",
         [](const Config& c) { return millis_text(c.shutdown_timeout); }},
        {"drain_ms", "REFGATE_DRAIN_MS",
         [](Config& c, const std::string& v) { return parse_millis_or_off(v, c.drain); },
         "milliseconds, 0 (no drain) to 86400000",
         [](const Config& c) { return millis_text(c.drain); }},
    };
}

// Counting clicks.
std::vector<Setting> counting_settings() {
    return {
        {"aggregation_window_ms", "REFGATE_AGGREGATION_WINDOW_MS",
         [](Config& c, const std::string& v) {
             return parse_millis(v, c.clicks.aggregation_window);
         },
         "milliseconds, 1 to 86400000",
         [](const Config& c) { return millis_text(c.clicks.aggregation_window); }},
        {"flush_interval_ms", "REFGATE_FLUSH_INTERVAL_MS",
         [](Config& c, const std::string& v) { return parse_millis(v, c.clicks.flush_interval); },
         "milliseconds, 1 to 86400000",
         [](const Config& c) { return millis_text(c.clicks.flush_interval); }},
        {"bucket_seconds", "REFGATE_BUCKET_SECONDS",
         [](Config& c, const std::string& v) {
             std::int64_t seconds = 0;
             if (!parse_uint<std::int64_t>(v, seconds, 1, 3600)) return false;
             c.clicks.bucket = std::chrono::seconds{seconds};
             return true;
         },
         "an integer from 1 to 3600",
         [](const Config& c) { return std::to_string(c.clicks.bucket.count()); }},
        {"max_pending_keys", "REFGATE_MAX_PENDING_KEYS",
         [](Config& c, const std::string& v) {
             return parse_uint<std::size_t>(v, c.clicks.max_pending_keys, 1, 100'000'000);
         },
         "an integer from 1 to 100000000",
         [](const Config& c) { return std::to_string(c.clicks.max_pending_keys); }},
        {"max_channels_per_link_day", "REFGATE_MAX_CHANNELS_PER_LINK_DAY",
         [](Config& c, const std::string& v) {
             return parse_uint<std::size_t>(v, c.clicks.max_channels_per_link_day, 1, 100'000);
         },
         "an integer from 1 to 100000",
         [](const Config& c) { return std::to_string(c.clicks.max_channels_per_link_day); }},
        {"stats_retention_days", "REFGATE_STATS_RETENTION_DAYS",
         [](Config& c, const std::string& v) {
             int days = 0;
             if (!parse_uint<int>(v, days, 0, 36'500) || (days > 0 && days < 7)) return false;
             c.clicks.stats_retention_days = days;
             return true;
         },
         "0 (keep every day) or days from 7 to 36500",
         [](const Config& c) { return std::to_string(c.clicks.stats_retention_days); }},
        text_setting(
            "spill_file", "REFGATE_SPILL_FILE",
            [](Config& c) -> std::string& { return c.clicks.spill_file; },
            "a file path (empty disables spilling)"),
        {"trusted_proxies", "REFGATE_TRUSTED_PROXIES",
         [](Config& c, const std::string& v) {
             c.clicks.trusted_proxies = v;
             return parse_networks(v).has_value();
         },
         "a comma-separated list of addresses or CIDR ranges",
         [](const Config& c) { return c.clicks.trusted_proxies; }},
    };
}

// Disclosures, logs, metrics and files.
std::vector<Setting> publishing_settings() {
    return {
        {"disclosure_default_locale", "REFGATE_DISCLOSURE_DEFAULT_LOCALE",
         [](Config& c, const std::string& v) {
             auto locale = domain::normalize_locale(v);
             if (locale) c.disclosure.default_locale = *locale;
             return locale.has_value();
         },
         "a language tag such as en or de-AT",
         [](const Config& c) { return c.disclosure.default_locale; }},
        {"disclosure_max_age", "REFGATE_DISCLOSURE_MAX_AGE",
         [](Config& c, const std::string& v) {
             std::int64_t seconds = 0;
             if (!parse_uint<std::int64_t>(v, seconds, 0, 31'536'000)) return false;
             c.disclosure.max_age = std::chrono::seconds{seconds};
             return true;
         },
         "seconds, 0 to 31536000",
         [](const Config& c) { return std::to_string(c.disclosure.max_age.count()); }},
        {"public_base_url", "REFGATE_PUBLIC_BASE_URL",
         [](Config& c, const std::string& v) {
             auto url = parse_public_base_url(v);
             if (url) c.disclosure.public_base_url = *url;
             return url.has_value();
         },
         "an https URL such as https://picks.example.com",
         [](const Config& c) { return c.disclosure.public_base_url; }},
        {"log_level", "REFGATE_LOG_LEVEL",
         [](Config& c, const std::string& v) {
             runtime::log::Level level;
             c.log_level = v;
             return runtime::log::parse_level(v, level);
         },
         "debug, info, warn or error", [](const Config& c) { return c.log_level; }},
        {"metrics_token", "REFGATE_METRICS_TOKEN",
         [](Config& c, const std::string& v) {
             c.metrics_token_required = v == "required";
             return v == "required" || v == "none";
         },
         "required or none",
         [](const Config& c) {
             return std::string(c.metrics_token_required ? "required" : "none");
         }},
        {"admin_max_connections", "REFGATE_ADMIN_MAX_CONNECTIONS",
         [](Config& c, const std::string& v) {
             return parse_uint<std::size_t>(v, c.admin_http.max_connections, 1, 100'000);
         },
         "an integer from 1 to 100000",
         [](const Config& c) { return std::to_string(c.admin_http.max_connections); }},
        {"admin_max_connections_per_client", "REFGATE_ADMIN_MAX_CONNECTIONS_PER_CLIENT",
         [](Config& c, const std::string& v) {
             return parse_uint<std::size_t>(v, c.admin_http.max_connections_per_client, 1, 100'000);
         },
         "an integer from 1 to 100000",
         [](const Config& c) { return std::to_string(c.admin_http.max_connections_per_client); }},
        {"reuse_port", "REFGATE_REUSE_PORT",
         [](Config& c, const std::string& v) { return parse_bool(v, c.reuse_port); },
         "true or false", [](const Config& c) { return bool_text(c.reuse_port); }},
        {"state_dir", "REFGATE_STATE_DIR",
         [](Config& c, const std::string& v) {
             c.state_dir = v;
             return true;
         },
         "a directory path", [](const Config& c) { return c.state_dir; }},
    };
}

// The admin listener and the console.
std::vector<Setting> admin_settings() {
    return {
        {"admin_cors_origins", "REFGATE_ADMIN_CORS_ORIGINS",
         [](Config& c, const std::string& v) {
             auto origins = parse_origins(v);
             if (origins) c.admin_cors_origins = *origins;
             return origins.has_value();
         },
         "a comma-separated list of origins such as https://console.example.com",
         [](const Config& c) { return join_list(c.admin_cors_origins); }},
        {"admin_db_wait_ms", "REFGATE_ADMIN_DB_WAIT_MS",
         [](Config& c, const std::string& v) { return parse_millis(v, c.admin_db_wait); },
         "milliseconds, 1 to 86400000",
         [](const Config& c) { return millis_text(c.admin_db_wait); }},
        {"postback_rate", "REFGATE_POSTBACK_RATE",
         [](Config& c, const std::string& v) {
             return parse_uint(v, c.postback_rate, std::uint32_t{1}, std::uint32_t{100'000});
         },
         "postbacks per second per partner, 1 to 100000",
         [](const Config& c) { return std::to_string(c.postback_rate); }},
        {"admin_public_url", "REFGATE_ADMIN_PUBLIC_URL",
         [](Config& c, const std::string& v) {
             auto origins = parse_origins(v);
             if (!origins || origins->size() > 1) return false;
             c.admin_public_url = origins->empty() ? std::string() : origins->front();
             return true;
         },
         "an origin such as https://admin.example.com",
         [](const Config& c) { return c.admin_public_url; }},
        {"console_session_idle", "REFGATE_CONSOLE_SESSION_IDLE",
         [](Config& c, const std::string& v) { return parse_seconds(v, c.console_session_idle); },
         "seconds, 1 to 2592000",
         [](const Config& c) { return std::to_string(c.console_session_idle.count()); }},
        {"console_session_max", "REFGATE_CONSOLE_SESSION_MAX",
         [](Config& c, const std::string& v) { return parse_seconds(v, c.console_session_max); },
         "seconds, 1 to 2592000",
         [](const Config& c) { return std::to_string(c.console_session_max.count()); }},
        {"auth_cache_seconds", "REFGATE_AUTH_CACHE_SECONDS",
         [](Config& c, const std::string& v) {
             std::int64_t value = 0;
             if (!parse_uint<std::int64_t>(v, value, 0, 60)) return false;
             c.auth_cache = std::chrono::seconds{value};
             return true;
         },
         "seconds, 0 (off) to 60",
         [](const Config& c) { return std::to_string(c.auth_cache.count()); }},
    };
}

// Every setting, in the order check-config prints them.
const std::vector<Setting>& settings() {
    static const std::vector<Setting> table = [] {
        std::vector<Setting> all;
        for (auto group : {connection_settings, redis_settings, serving_settings, counting_settings,
                           scanner_settings, publishing_settings, admin_settings,
                           linkcheck_settings, webhook_settings}) {
            auto part = group();
            all.insert(all.end(), part.begin(), part.end());
        }
        return all;
    }();
    return table;
}

std::string json_value_text(const nlohmann::json& value) {
    if (value.is_string()) return value.get<std::string>();
    return value.dump();
}

}  // namespace

EnvLookup process_env() {
    return [](const std::string& name) -> std::optional<std::string> {
        const char* value = std::getenv(name.c_str());
        if (value == nullptr) return std::nullopt;
        return std::string(value);
    };
}

Config load_config(const std::optional<std::string>& file, const EnvLookup& env) {
    Config config;
    auto fail = [](const std::string& where, const Setting& s, std::string value) {
        // The message is one line whatever the value holds.
        for (char& c : value) {
            if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
        }
        throw ConfigError("invalid " + where + " '" + redact_secrets(value) + "': expected " +
                          s.expected);
    };
    if (file) {
        std::ifstream in(*file);
        if (!in) throw ConfigError("config file " + *file + ": cannot be read");
        nlohmann::json doc;
        try {
            doc = nlohmann::json::parse(in);
        } catch (const nlohmann::json::parse_error& e) {
            throw ConfigError("config file " + *file + ": not valid JSON (" + e.what() + ")");
        }
        if (!doc.is_object()) throw ConfigError("config file " + *file + ": must be a JSON object");
        for (const auto& [key, value] : doc.items()) {
            const Setting* found = nullptr;
            for (const auto& s : settings()) {
                if (key == s.key) found = &s;
            }
            if (found == nullptr)
                throw ConfigError("config file " + *file + ": unknown key '" + key + "'");
            if (value.is_object() || value.is_array() || value.is_null()) {
                fail("setting " + key, *found, value.dump());
            }
            std::string text = json_value_text(value);
            if (!found->apply(config, text)) fail("setting " + key, *found, text);
        }
    }
    for (const auto& s : settings()) {
        if (auto value = env(s.env)) {
            if (!s.apply(config, *value)) fail(std::string(s.env), s, *value);
        }
    }
    if (listeners_overlap(config.listen, config.admin_listen)) {
        throw ConfigError("REFGATE_LISTEN (listen) " + config.listen.to_string() +
                          " and REFGATE_ADMIN_LISTEN (admin_listen) " +
                          config.admin_listen.to_string() +
                          " share an address: give each listener a port of its own");
    }
    return config;
}

std::vector<std::pair<std::string, std::string>> describe_config(const Config& config) {
    std::vector<std::pair<std::string, std::string>> rows;
    for (const auto& s : settings()) rows.emplace_back(s.key, s.show(config));
    return rows;
}

std::string default_state_dir(const EnvLookup& env, const DirCheck& usable) {
    if (usable(kSystemStateDir)) return kSystemStateDir;
    if (auto xdg = env("XDG_STATE_HOME"); xdg && !xdg->empty() && xdg->front() == '/')
        return *xdg + "/refgate";
    if (auto home = env("HOME"); home && !home->empty()) return *home + "/.local/state/refgate";
    throw ConfigError(
        "no state directory: /var/lib/refgate is not writable and neither XDG_STATE_HOME nor "
        "HOME is set; set REFGATE_STATE_DIR (state_dir)");
}

void resolve_state_paths(Config& config, const EnvLookup& env, const DirCheck& usable) {
    if (config.state_dir.empty()) config.state_dir = default_state_dir(env, usable);
    for (std::string* path : {&config.snapshot_file, &config.clicks.spill_file}) {
        if (!path->empty() && path->front() != '/') *path = config.state_dir + "/" + *path;
    }
}

}  // namespace refgate::config
