#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "refgate/domain/ip_network.hpp"

namespace refgate::config {

struct Endpoint {
    std::string host = "127.0.0.1";
    std::uint16_t port = 0;

    std::string to_string() const;
};

// Limits of one HTTP listener. Every one of them bounds memory or time that a client controls.
struct HttpLimits {
    std::size_t max_header_bytes = 8 * 1024;          // request line + fields; more is 431
    std::size_t max_target_bytes = 2 * 1024;          // request target; more is 414
    std::size_t max_body_bytes = 0;                   // more is 413; GET/HEAD never take a body
    std::chrono::milliseconds read_timeout{15'000};   // idle keep-alive or a whole request header
    std::chrono::milliseconds write_timeout{15'000};  // writing one batch of responses
    std::size_t max_connections = 10'000;             // per listener; more are closed at accept
    // Of those, one client (an IPv4 address, an IPv6 /64) may hold this many, so that one client
    // cannot take them all (a slowloris); more are closed at accept. 0: no share per client.
    std::size_t max_connections_per_client = 0;
};

// How clicks move from memory to Redis to PostgreSQL.
struct ClickConfig {
    std::chrono::milliseconds aggregation_window{
        250};  // memory -> Redis; a SIGKILL loses at most this
    std::chrono::milliseconds flush_interval{5'000};  // Redis -> PostgreSQL
    std::chrono::seconds bucket{10};                  // Redis time buckets
    std::size_t max_pending_keys = 1'000'000;  // while Redis is down; past it clicks are dropped
    // Distinct channels (src) per link and UTC day; past it clicks count under "other".
    std::size_t max_channels_per_link_day = 100;
    // Days of per-channel counts kept (refgate_click_counts); older days stay in the roll-ups
    // only. 0: every day.
    int stats_retention_days = 0;
    std::string spill_file = "refgate-spill.json";  // counts left at stop while Redis is down
    std::string trusted_proxies;                    // comma-separated addresses or CIDRs
    // The click class `scanner`: the ASN database and the scanner networks file ("default": the
    // files built and installed with refgate, found beside its binary; empty: none), and the
    // burst rule (this many distinct links of one channel within the seconds; 0 links: off).
    std::string asn_db = "default";
    std::string scanner_networks = "default";
    unsigned scanner_burst_links = 4;
    std::int64_t scanner_burst_seconds = 10;
    // Targeting rules' country: a country database in MaxMind's format ("default": the one built
    // with refgate, beside the binary; empty: none, country rules are skipped).
    std::string geoip_db = "default";
};

// Redis beyond its URL: the sentinels' password and replica acknowledgement.
struct RedisHaConfig {
    std::string sentinel_password;  // AUTH to the sentinels of a redis+sentinel:// URL
    // > 0: a send round (and a flush, after closing buckets) succeeds only once this many replicas
    // acknowledged it (WAIT); else its batches are resent under the same ids.
    unsigned min_replicas_acked = 0;
    std::chrono::milliseconds wait_timeout{500};  // of each WAIT
};

// The public disclosure and snippet endpoints.
struct DisclosureConfig {
    std::string default_locale = "en";  // normalised; the last fallback of every lookup
    std::chrono::seconds max_age{300};  // Cache-Control: public, max-age
    std::string public_base_url;        // https origin (and path) of /go/ links; empty: no snippets
};

// A name the link checker looks up as a fixed address (like curl's --resolve), for tests only:
// the address is also let past the checker's refusal of private and loopback addresses.
struct ResolveEntry {
    std::string host;
    std::uint16_t port = 0;
    std::string address;
};

// The link-health checker: schedule, pace, limits and its identity.
struct LinkCheckConfig {
    std::chrono::seconds interval{24 * 3600};   // every active link once per interval; 0: off
    std::chrono::milliseconds host_gap{1'000};  // at most one request per host per gap
    std::chrono::seconds confirm_after{3600};   // a finding is confirmed by a check this later
    std::chrono::milliseconds timeout{10'000};  // per hop (connect: at most 5 s of it)
    std::string ca_file;                        // PEM trust store; empty: the system's
    std::vector<ResolveEntry> resolve;          // test-only fixed addresses
    std::string contact_url;                    // named in the User-Agent
};

// Webhook delivery (issue 44): the link checker's outbound rules, its own trust store and test
// resolve list, and the retry schedule (the base and the window are settings for tests).
struct WebhookConfig {
    std::string ca_file;                          // PEM trust store; empty: the system's
    std::vector<ResolveEntry> resolve;            // test-only fixed addresses
    std::chrono::milliseconds retry_base{5'000};  // first retry after this, then doubling
    std::chrono::seconds give_up{24 * 3600};      // an event failing this long is failed, and a
                                                  // webhook failing this long is disabled
    std::chrono::milliseconds timeout{10'000};    // per delivery attempt
};

struct Config {
    Endpoint listen{"127.0.0.1", 8080};
    Endpoint admin_listen{"127.0.0.1", 9090};
    std::string database_url = "postgresql://127.0.0.1:5432/refgate";
    // Where the stats API reads counts (a read-only replica); empty: database_url.
    std::string stats_database_url;
    std::string redis_url = "redis://127.0.0.1:6379/0";
    RedisHaConfig redis_ha{};
    unsigned threads = 2;
    // Each I/O thread reads (and sends) a batch of ready connections in one io_uring system
    // call, where the kernel allows it.
    bool io_uring = true;
    std::string snapshot_file = "refgate-snapshot.json";
    std::string referrer_policy = "strict-origin-when-cross-origin";
    // Issue 46: a redirect whose host names no domain is 404 (`reject`) instead of served as the
    // default domain (`default`).
    bool reject_unknown_host = false;
    bool allow_http_destinations = false;
    HttpLimits http{};
    HttpLimits admin_http{
        .max_body_bytes = 64 * 1024, .max_connections = 256, .max_connections_per_client = 64};
    std::chrono::milliseconds reload_interval{5'000};  // safety net beside LISTEN/NOTIFY
    // From the first stop signal, /readyz answers 503 while both listeners keep serving this
    // long, so that load balancers stop sending traffic before the listeners close; 0: no drain.
    std::chrono::milliseconds drain{5'000};
    std::chrono::milliseconds shutdown_timeout{10'000};
    ClickConfig clicks{};
    DisclosureConfig disclosure{};
    std::string log_level = "info";
    bool metrics_token_required = false;  // /metrics asks for a viewer token
    // Share the listeners' ports with another process (SO_REUSEPORT), for zero-downtime restarts;
    // off, a port that something else holds stops start-up.
    bool reuse_port = false;
    // Where the snapshot and spill files live when their settings name no absolute path; empty:
    // chosen at start-up (see resolve_state_paths).
    std::string state_dir;
    // Origins (scheme://host[:port]) whose browsers may call the admin API cross-origin; empty:
    // the API is same-origin only.
    std::vector<std::string> admin_cors_origins;
    // How long an admin API call waits for a database connection before answering 503.
    std::chrono::milliseconds admin_db_wait{2'000};
    // Postbacks (/postback/{partner}, issue 43) each partner may send per second; bursts of
    // twice as many. More are answered 429.
    std::uint32_t postback_rate = 50;
    // The admin listener's origin as browsers reach it (https://admin.example.com): the console's
    // requests must come from it, and when it is https the session cookie is Secure and
    // __Host- prefixed. Empty: requests are compared with their own Host.
    std::string admin_public_url;
    std::chrono::seconds console_session_idle{30 * 60};  // unused this long, a session ends
    std::chrono::seconds console_session_max{12 * 60 *
                                             60};  // and in any case this long after sign-in
    // A token or console session the admin API checked is kept in memory this long (0: never):
    // a revocation made through another instance or the CLI takes effect within it.
    std::chrono::seconds auth_cache{5};
    LinkCheckConfig linkcheck{};
    WebhookConfig webhooks{};
};

// A bad setting at start-up. what() is one line that names the setting.
class ConfigError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;

EnvLookup process_env();

// Reads the JSON file (when given), then applies REFGATE_* environment variables over it.
// Unknown keys and bad values throw ConfigError.
Config load_config(const std::optional<std::string>& file, const EnvLookup& env);

// The text with every secret replaced by ***: userinfo passwords of URLs
// (postgresql://user:***@host, redis://:***@host) and password= parameters. For anything printed
// or logged that may hold a connection string.
std::string redact_secrets(std::string text);

// True when two listeners would bind the same address: the same non-zero port on the same host,
// on 0.0.0.0 and any IPv4 address, or on :: and any address.
bool listeners_overlap(const Endpoint& a, const Endpoint& b);

// Every setting as (key, current value in the form the setting accepts), secrets redacted, in the
// order of the settings table.
std::vector<std::pair<std::string, std::string>> describe_config(const Config& config);

inline constexpr const char* kSystemStateDir = "/var/lib/refgate";
// True when the directory exists and this process may create files in it.
using DirCheck = std::function<bool(const std::string&)>;

// The state directory when none is set: /var/lib/refgate when `usable`, else
// $XDG_STATE_HOME/refgate, else $HOME/.local/state/refgate. Throws ConfigError when none applies.
std::string default_state_dir(const EnvLookup& env, const DirCheck& usable);
// Sets state_dir when empty and puts relative snapshot and spill file paths inside it.
void resolve_state_paths(Config& config, const EnvLookup& env, const DirCheck& usable);

// Parses "10.0.0.0/8, 192.0.2.7"; nullopt when an entry is not an address or range.
std::optional<std::vector<domain::IpNetwork>> parse_networks(const std::string& list);

// "https://picks.example.com" or with a path prefix; no userinfo, query or fragment. Returns it
// without a trailing slash; nullopt when it is not such a URL.
std::optional<std::string> parse_public_base_url(const std::string& text);

// "shop.test:443:127.0.0.2, [v6 name]:..."; nullopt when an entry is not host:port:address.
std::optional<std::vector<ResolveEntry>> parse_resolve_list(const std::string& list);
std::string resolve_list_text(const std::vector<ResolveEntry>& entries);

// "24h", "90m", "30s", "2d" or bare seconds; nullopt when not such a duration.
std::optional<std::chrono::seconds> parse_duration_text(const std::string& text);
std::string duration_text(std::chrono::seconds duration);

// Parses "host:port" or "[v6]:port".
std::optional<Endpoint> parse_endpoint(const std::string& text);

}  // namespace refgate::config
