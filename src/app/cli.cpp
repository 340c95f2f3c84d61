#include <unistd.h>

#include <boost/program_options.hpp>
#include <charconv>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <sstream>
#include <thread>

#include "check_links.hpp"
#include "refgate/admin/admin_json.hpp"
#include "refgate/admin/commissions.hpp"
#include "refgate/admin/console_crypto.hpp"
#include "refgate/admin/pg_admin_store.hpp"
#include "refgate/admin/pg_stats_store.hpp"
#include "refgate/admin/placements.hpp"
#include "refgate/app/app.hpp"
#include "refgate/clicks/click_pipeline.hpp"
#include "refgate/clicks/pg_count_sink.hpp"
#include "refgate/clicks/redis_bucket_store.hpp"
#include "refgate/codec/import_diff.hpp"
#include "refgate/codec/tool_import.hpp"
#include "refgate/domain/destination.hpp"
#include "refgate/domain/model.hpp"
#include "refgate/domain/public_suffix.hpp"
#include "refgate/domain/time.hpp"
#include "refgate/pg/connection.hpp"
#include "refgate/pg/database.hpp"
#include "refgate/pg/rollups.hpp"
#include "refgate/runtime/log.hpp"
#include "services.hpp"

namespace refgate::app {
namespace {

namespace po = boost::program_options;

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

// The last --NAME given (a repeatable option read where one value is meant); empty: none.
std::string last_option(const po::variables_map& vm, const char* name) {
    if (!vm.count(name)) return {};
    const auto& values = vm[name].as<std::vector<std::string>>();
    return values.empty() ? std::string() : values.back();
}

constexpr const char* kUsage = R"(usage: refgate [--config FILE] COMMAND [ARGS]
       refgate --version

commands:
  serve          answer redirects on REFGATE_LISTEN and serve /healthz, /readyz on both listeners
  migrate        apply the SQL migrations that are not applied yet (safe to run twice, or at once)
  check-config   validate the configuration and print it
  import FILE    upsert partners and links from a JSON file ('-' reads standard input), or links
                 from a CSV file (FILE ending in .csv); all or nothing
  import --dry-run FILE
                 print what the import would create, change and refuse; apply nothing
  import --from prettylinks|thirstyaffiliates|shlink|yourls [--dry-run]
         [--partner-map FILE] [--lock-codes] FILE
                 import another tool's export: destinations grouped into partners by
                 registrable domain (--partner-map: a JSON object from domain to a slug or to
                 {"slug", "name", "ref_param", "ref_code"}); a referral parameter left in the
                 URLs (tag=, ref=, aff=, ...) is proposed as the partner's locked code, and
                 --lock-codes moves it out of the URLs; click history is not imported
  export         print every partner and link in the import format
  flush          move every count waiting in Redis into PostgreSQL now, and print what moved
  rollups check [--all]
                 recompute the stats roll-ups of a sample of links and days (--all: of every
                 link and day) from the base tables and print any difference; exit 1 when one
                 differs or they are not built yet (`refgate migrate` builds them)
  commissions import --partner P [--format impact|awin] [--dry-run] FILE
                 record partner P's commissions from a CSV file (a JSON array or {"items": []}
                 when FILE ends in .json; '-' reads CSV from standard input); all or nothing,
                 every refused row listed by line; --dry-run applies nothing; --format reads
                 Impact's Actions (CSV, or JSON for .json) or Awin's transactions (JSON)
  placements [--slug S]
                 print every link's placement tokens (or only link S's): link, channel, token
                 and human clicks of the last 30 days per channel with clicks
  check-links [--slug S] [--partner P]
                 check the active links' redirect chains now (referral code, availability)
  token create --name NAME --role viewer|editor|admin [--scope S]... [--partner P]...
               [--domain H]... [--expires 30d]
                 create an admin API token; it is printed once, alone on the last line.
                 --scope: what it may do within its role (links:read, links:write,
                 partners:read, partners:write, stats:read, earnings:read, disclosures:write,
                 webhooks:write, users:write; none given: all the role allows); --partner and
                 --domain: it sees and changes only those partners' links, links on those
                 domains; --expires: 30d, 12h or an RFC 3339 time (then answered 401)
  token list     list tokens (name, role, created, last used, revoked, scopes, partners,
                 domains, expires); never their text
  token revoke NAME
                 revoke the live token of that name

  user create --name NAME --role viewer|editor|admin [--password-stdin]
                 create a console user; without --password-stdin a password is generated and
                 printed once
  user list      list console users (name, role, disabled, created, last sign-in)
  user disable NAME
                 disable a console user and end their sessions; works on the last enabled admin
                 too (the API refuses that), the way to lock out or recover an admin account
  user set-password NAME [--password-stdin]
                 set a new password (generated and printed once without --password-stdin) and
                 end the user's sessions
                 passwords: at least 12 characters, not containing the user's name, not one
                 short sequence repeated, not a commonly used password

  --actor NAME   import, token and user changes are audited as cli:NAME (default: cli:<OS user>)

Settings come from the JSON file given with --config, overridden by REFGATE_* environment
variables; see README.md.
)";

bool writable_dir(const std::string& path) {
    std::error_code ec;
    return std::filesystem::is_directory(path, ec) && ::access(path.c_str(), W_OK | X_OK) == 0;
}

// Every setting from the table that parses them, secrets redacted; each value reads back as
// the same setting.
int check_config(const config::Config& c) {
    nlohmann::ordered_json out = nlohmann::ordered_json::object();
    for (auto& [key, value] : config::describe_config(c)) out[key] = value;
    std::cout << out.dump(2) << "\nconfiguration ok\n";
    return kExitOk;
}

// Who the audit trail names for a CLI change: "cli:" and --actor, else the OS user running it.
std::optional<std::string> cli_actor(const po::variables_map& vm) {
    if (!vm.count("actor")) return admin::os_user_actor();
    std::string name = vm["actor"].as<std::string>();
    if (!admin::valid_token_name(name)) {
        std::cerr << "refgate: --actor must match [A-Za-z0-9][A-Za-z0-9_.@-]{0,63}\n";
        return std::nullopt;
    }
    return "cli:" + name;
}

// The file's text ('-': standard input); nullopt when it cannot be read.
std::optional<std::string> read_text(const std::string& path) {
    std::stringstream text;
    if (path == "-") {
        text << std::cin.rdbuf();
        return text.str();
    }
    std::ifstream in(path);
    if (!in) return std::nullopt;
    text << in.rdbuf();
    return text.str();
}

// A JSON import document, or links as CSV when the name ends in ".csv"; --dry-run prints what
// the import would do and rolls it back.
// `refgate import --from <tool> FILE`: another tool's export, grouped into partners by
// registrable domain, through the same import as a document (issue 46).
int import_from_tool(const config::Config& c, const std::string& path, const po::variables_map& vm,
                     const std::string& actor) {
    auto tool = codec::parse_export_tool(vm["from"].as<std::string>());
    if (!tool) {
        std::cerr << "refgate import: --from must be prettylinks, thirstyaffiliates, shlink or "
                     "yourls\n";
        return kExitUsage;
    }
    auto text = read_text(path);
    if (!text) {
        std::cerr << "refgate import: cannot read " << path << "\n";
        return kExitFailure;
    }
    auto list = read_text(std::string(domain::kPublicSuffixListPath));
    if (!list) {
        std::cerr << "refgate import: cannot read " << domain::kPublicSuffixListPath
                  << " (Debian's publicsuffix package)\n";
        return kExitFailure;
    }
    domain::PublicSuffixList suffixes(*list);
    codec::PartnerMap map;
    if (vm.count("partner-map")) {
        std::string map_path = vm["partner-map"].as<std::string>();
        auto map_text = read_text(map_path);
        nlohmann::json json = nlohmann::json(nlohmann::json::value_t::discarded);
        if (map_text) json = nlohmann::json::parse(*map_text, nullptr, false);
        std::vector<std::string> problems;
        if (!map_text || json.is_discarded()) {
            problems.push_back("cannot read it as JSON");
        } else {
            map = codec::parse_partner_map(json, problems);
        }
        for (const auto& p : problems)
            std::cerr << "refgate import: --partner-map " << map_path << ": " << p << "\n";
        if (!problems.empty()) return kExitFailure;
    }
    bool lock_codes = vm.count("lock-codes") != 0;
    bool dry_run = vm.count("dry-run") != 0;
    auto plan = codec::plan_tool_import(
        codec::read_tool_export(*tool, *text),
        {.suffixes = suffixes, .partner_map = map, .lock_codes = lock_codes});
    std::cout << codec::plan_text(plan, *tool, lock_codes);
    auto report = pg::import_document(c.database_url, plan.document,
                                      domain::UrlPolicy{.allow_http = c.allow_http_destinations},
                                      actor, dry_run || !plan.problems.empty());
    codec::ImportInput input;
    auto refused = codec::import_refusals(input, report.issues);
    if (dry_run) {
        std::cout << codec::import_result_text(report.diff, refused)
                  << "dry run: nothing applied\n";
        return refused.empty() && plan.problems.empty() ? kExitOk : kExitFailure;
    }
    if (!refused.empty() || !plan.problems.empty()) {
        for (const auto& issue : report.issues)
            std::cerr << "invalid: " << issue.to_string() << "\n";
        std::cerr << "refgate import: nothing applied, " << refused.size() + plan.problems.size()
                  << " problem(s)\n";
        return kExitFailure;
    }
    std::cout << "imported: " << report.partners_changed << " partner(s) and "
              << report.links_changed << " link(s) changed\n";
    return kExitOk;
}

int import_file(const config::Config& c, const std::string& path, const po::variables_map& vm) {
    auto actor = cli_actor(vm);
    if (!actor) return kExitUsage;
    if (vm.count("from")) return import_from_tool(c, path, vm, *actor);
    auto text = read_text(path);
    if (!text) {
        std::cerr << "refgate import: cannot read " << path << "\n";
        return kExitFailure;
    }
    codec::ImportInput input = codec::read_import_text(*text, path.ends_with(".csv"));
    if (!input.document) {
        std::cerr << "refgate import: " << path << " is not valid JSON: " << input.json_error
                  << "\n";
        return kExitFailure;
    }
    bool dry_run = vm.count("dry-run") != 0;
    auto report = pg::import_document(c.database_url, *input.document,
                                      domain::UrlPolicy{.allow_http = c.allow_http_destinations},
                                      *actor, dry_run || !input.refused.empty());
    auto refused = codec::import_refusals(input, report.issues);
    if (dry_run) {
        std::cout << codec::import_result_text(report.diff, refused)
                  << "dry run: nothing applied\n";
        return refused.empty() ? kExitOk : kExitFailure;
    }
    if (!refused.empty()) {
        for (const auto& r : input.refused)
            std::cerr << "invalid: line " << r.line.value_or(0) << ": " << r.message << "\n";
        for (const auto& issue : report.issues)
            std::cerr << "invalid: " << issue.to_string() << "\n";
        std::cerr << "refgate import: nothing applied, " << refused.size() << " problem(s)\n";
        return kExitFailure;
    }
    std::cout << "imported: " << report.partners_changed << " partner(s) and "
              << report.links_changed << " link(s) changed, " << report.disclosures_changed
              << " disclosure version(s) added\n";
    return kExitOk;
}

int flush(const config::Config& c) {
    auto store =
        clicks::make_redis_bucket_store({.address = redis_address(c),
                                         .timeout = clicks::kFlushRedisTimeout,
                                         .min_replicas_acked = c.redis_ha.min_replicas_acked,
                                         .wait_timeout = c.redis_ha.wait_timeout});
    // One attempt, so it may wait for a busy server longer than the service's flusher does.
    auto sink =
        clicks::make_pg_count_sink({.database_url = c.database_url,
                                    .connect_timeout_seconds = 15,
                                    .max_channels_per_link_day = c.clicks.max_channels_per_link_day,
                                    .stats_retention_days = c.clicks.stats_retention_days});
    clicks::Flusher flusher(*store, *sink, {.bucket = c.clicks.bucket});
    // Another instance may be flushing right now; it releases the lock within seconds.
    for (int attempt = 0; attempt < 100; ++attempt) {
        auto r = flusher.flush(true);
        if (!r) {
            bool redis = r.fault().dependency == clicks::Dependency::redis;
            runtime::log::error(redis ? "redis_error" : "database_error",
                                {{"command", "flush"}, {"error", r.fault().message}});
            return kExitFailure;
        }
        if (r->busy) {
            std::this_thread::sleep_for(std::chrono::milliseconds{100});
            continue;
        }
        std::cout << "flushed: " << r->buckets << " bucket(s), " << r->counters << " counter(s), "
                  << r->clicks << " click(s); " << r->skipped_buckets
                  << " bucket(s) already applied; " << r->unique_estimates
                  << " unique estimate(s)\n";
        return kExitOk;
    }
    std::cerr << "refgate flush: another instance kept the flush lock for 10 s\n";
    return kExitFailure;
}

int rollups_command(const config::Config& c, const std::vector<std::string>& args,
                    const po::variables_map& vm) {
    if (args.size() != 1 || args[0] != "check") {
        std::cerr << "refgate rollups: expected check [--all]\n" << kUsage;
        return kExitUsage;
    }
    pg::RollupCheck check;
    try {
        auto conn = pg::connect(c.database_url, 15);
        check = pg::check_rollups(*conn, vm.count("all") != 0);
    } catch (const pqxx::failure& e) {
        throw pg::DatabaseError(std::string("rollups check: ") + e.what());
    }
    if (!check.state.complete) {
        std::cout << "roll-ups: not built yet (links up to id " << check.state.built_through
                  << " so far); `refgate migrate` or the flusher builds them\n";
        return kExitFailure;
    }
    for (const auto& d : check.shown) {
        std::cout << "difference: " << d.table << ", " << d.key << ": roll-up " << d.rollup
                  << "; base tables " << d.expected << "\n";
    }
    std::cout << "roll-ups: checked " << (check.all ? "every" : "a sample of") << " " << check.links
              << " link(s) and " << check.days << " day(s): " << check.differences
              << " difference(s)\n";
    return check.differences == 0 ? kExitOk : kExitFailure;
}

// `--expires`: "30d" or "12h" from now, or an RFC 3339 time; empty when it is neither.
std::string expiry_time(const std::string& text) {
    if (auto at = domain::parse_rfc3339(text)) return domain::format_rfc3339(*at);
    if (text.size() < 2 || (text.back() != 'd' && text.back() != 'h')) return {};
    int n = 0;
    auto digits = std::string_view(text).substr(0, text.size() - 1);
    auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
    if (ec != std::errc{} || ptr != digits.data() + digits.size() || n < 1 || n > 36500) return {};
    auto now = std::chrono::time_point_cast<std::chrono::seconds>(std::chrono::system_clock::now());
    auto length = text.back() == 'd' ? std::chrono::hours(24) * n : std::chrono::hours(n);
    return domain::format_rfc3339(now + length);
}

// `refgate token create`'s options as POST /api/v1/tokens' body would carry them; the usage
// error when one is wrong.
std::optional<std::string> read_token_options(const po::variables_map& vm, admin::NewToken& token) {
    auto list = [&](const char* name) {
        return vm.count(name) ? vm[name].as<std::vector<std::string>>()
                              : std::vector<std::string>{};
    };
    if (vm.count("scope")) {
        token.scopes = admin::scope::none;
        for (const auto& name : list("scope")) {
            auto s = admin::parse_scope(name);
            if (!s) return "--scope " + name + " is not a scope (links:read, links:write, ...)";
            *token.scopes |= *s;
        }
    }
    for (const auto& slug : list("partner")) {
        if (!domain::valid_slug(slug)) return "--partner " + slug + " is not a partner slug";
        token.reach.partners.push_back(slug);
    }
    for (const auto& host : list("domain")) {
        if (!domain::valid_dns_name(host))
            return "--domain " + host + " is not a lower-case host name";
        token.reach.domains.push_back(host);
    }
    if (vm.count("expires")) {
        token.expires_at = expiry_time(vm["expires"].as<std::string>());
        if (token.expires_at.empty())
            return "--expires must be a number of days (30d) or hours (12h), or an RFC 3339 time";
    }
    return std::nullopt;
}

int token_command(const config::Config& c, const std::vector<std::string>& args,
                  const po::variables_map& vm) {
    auto actor = cli_actor(vm);
    if (!actor) return kExitUsage;
    if (args.size() == 1 && args[0] == "create") {
        if (!vm.count("name") || !vm.count("role")) {
            std::cerr << "refgate token create: --name and --role are required\n";
            return kExitUsage;
        }
        auto role = admin::parse_role(vm["role"].as<std::string>());
        if (!role) {
            std::cerr << "refgate token create: --role must be viewer, editor or admin\n";
            return kExitUsage;
        }
        admin::NewToken command{.name = vm["name"].as<std::string>(), .role = *role};
        if (auto error = read_token_options(vm, command)) {
            std::cerr << "refgate token create: " << *error << "\n";
            return kExitUsage;
        }
        try {
            std::string token = admin::create_token(c.database_url, command, *actor);
            std::cout << "token '" << command.name << "' (" << admin::to_string(*role)
                      << ") created; it is shown only now:\n"
                      << token << "\n";
            return kExitOk;
        } catch (const std::invalid_argument& e) {
            std::cerr << "refgate token create: " << e.what() << "\n";
            return kExitFailure;
        }
    }
    if (args.size() == 1 && args[0] == "list") {
        std::cout << "name\trole\tcreated_at\tlast_used_on\trevoked_at\tscopes\tpartners\tdomains"
                     "\texpires_at\n";
        auto words = [](const std::vector<std::string>& list) {
            std::string text;
            for (const auto& w : list) text += (text.empty() ? "" : ",") + w;
            return text.empty() ? std::string("-") : text;
        };
        for (const auto& t : admin::list_tokens(c.database_url)) {
            std::cout << t.name << "\t" << t.role << "\t" << t.created_at << "\t"
                      << (t.last_used_on.empty() ? "-" : t.last_used_on) << "\t"
                      << (t.revoked_at.empty() ? "-" : t.revoked_at) << "\t" << words(t.scopes)
                      << "\t" << words(t.partners) << "\t" << words(t.domains) << "\t"
                      << (t.expires_at.empty() ? "-" : t.expires_at) << "\n";
        }
        return kExitOk;
    }
    if (args.size() == 2 && args[0] == "revoke") {
        if (!admin::revoke_token(c.database_url, args[1], *actor)) {
            std::cerr << "refgate token revoke: no live token named '" << args[1] << "'\n";
            return kExitFailure;
        }
        std::cout << "revoked: " << args[1] << "\n";
        return kExitOk;
    }
    std::cerr << "refgate token: expected create, list or revoke NAME\n" << kUsage;
    return kExitUsage;
}

// The password given on standard input (one trailing newline dropped), or none when the option
// is absent: the command generates one then.
std::optional<std::string> stdin_password(const po::variables_map& vm) {
    if (!vm.count("password-stdin")) return std::nullopt;
    std::string password((std::istreambuf_iterator<char>(std::cin)),
                         std::istreambuf_iterator<char>());
    if (password.ends_with('\n')) password.pop_back();
    if (password.ends_with('\r')) password.pop_back();
    return password;
}

void print_user_list(const config::Config& c) {
    std::cout << "name\trole\tdisabled\tcreated_at\tlast_sign_in_at\n";
    for (const auto& u : admin::list_users(c.database_url)) {
        std::cout << u.name << "\t" << u.role << "\t" << (u.disabled ? "yes" : "no") << "\t"
                  << admin::format_micros(u.stamps.created_us) << "\t"
                  << (u.last_sign_in_us ? admin::format_micros(*u.last_sign_in_us) : "-") << "\n";
    }
}

int user_command(const config::Config& c, const std::vector<std::string>& args,
                 const po::variables_map& vm) {
    auto actor = cli_actor(vm);
    if (!actor) return kExitUsage;
    try {
        if (args.size() == 1 && args[0] == "create") {
            auto role =
                vm.count("role") ? admin::parse_role(vm["role"].as<std::string>()) : std::nullopt;
            if (!vm.count("name") || !role) {
                std::cerr << "refgate user create: --name and --role viewer|editor|admin are "
                             "required\n";
                return kExitUsage;
            }
            std::string name = vm["name"].as<std::string>();
            // value_or, not *: GCC 12 at -O3 cannot see the check above (-Wmaybe-uninitialized).
            const admin::Role chosen = role.value_or(admin::Role::viewer);
            std::string generated =
                admin::create_user(c.database_url, name, chosen, stdin_password(vm), *actor);
            std::cout << "user '" << name << "' (" << admin::to_string(chosen) << ") created\n";
            if (!generated.empty()) std::cout << "password, shown only now:\n" << generated << "\n";
            return kExitOk;
        }
        if (args.size() == 1 && args[0] == "list") {
            print_user_list(c);
            return kExitOk;
        }
        if (args.size() == 2 && args[0] == "disable") {
            auto result = admin::disable_user(c.database_url, args[1], *actor);
            if (result == admin::DisableResult::no_such_user) {
                std::cerr << "refgate user disable: no user named '" << args[1] << "'\n";
                return kExitFailure;
            }
            std::cout << "disabled: " << args[1] << "; their sessions have ended\n";
            // The API refuses this; the CLI is the recovery path, so it goes ahead and says so.
            if (result == admin::DisableResult::disabled_last_admin)
                std::cerr << "refgate user disable: warning: '" << args[1]
                          << "' was the last enabled admin; no one can manage users in the "
                             "console until another is made with `refgate user create --name "
                             "NAME --role admin`\n";
            return kExitOk;
        }
        if (args.size() == 2 && args[0] == "set-password") {
            auto generated =
                admin::set_user_password(c.database_url, args[1], stdin_password(vm), *actor);
            if (!generated) {
                std::cerr << "refgate user set-password: no user named '" << args[1] << "'\n";
                return kExitFailure;
            }
            std::cout << "password of '" << args[1] << "' set; their sessions have ended\n";
            if (!generated->empty())
                std::cout << "password, shown only now:\n" << *generated << "\n";
            return kExitOk;
        }
    } catch (const std::invalid_argument& e) {
        std::cerr << "refgate user: " << e.what() << "\n";
        return kExitFailure;
    }
    std::cerr << "refgate user: expected create, list, disable NAME or set-password NAME\n"
              << kUsage;
    return kExitUsage;
}

// `refgate placements [--slug S]`: what GET /api/v1/links/{slug}/placements answers, for one link
// or every link, as tab-separated lines.
int placements_command(const config::Config& c, const po::variables_map& vm) {
    auto stores = admin::make_pg_admin_stores(
        {.database_url = c.database_url,
         .url_policy = domain::UrlPolicy{.allow_http = c.allow_http_destinations}});
    auto stats =
        admin::make_pg_stats_store({.database_url = c.database_url, .redis = redis_address(c)});
    domain::SystemClock clock;
    std::vector<domain::RangeProblem> problems;
    auto range = domain::parse_range(std::nullopt, std::nullopt, admin::utc_today(clock), problems);
    std::vector<std::string> slugs;
    if (vm.count("slug")) {
        slugs.push_back(vm["slug"].as<std::string>());
    } else {
        admin::LinkFilter filter;
        filter.limit = 200;
        for (;;) {
            auto page = stores.store->list_links(filter);
            for (const auto& item : page.view.items) slugs.push_back(item.link.slug);
            if (!page.view.next_cursor) break;
            filter.cursor = *page.view.next_cursor;
        }
    }
    std::cout << "link\tchannel\ttoken\thuman_clicks\n";
    for (const auto& slug : slugs) {
        auto found = admin::link_placements(*stores.store, *stats, slug, *range);
        if (found.kind == admin::OutcomeKind::not_found) {
            std::cerr << "refgate placements: no link '" << slug << "'\n";
            return kExitFailure;
        }
        for (const auto& item : found.view.items) {
            std::cout << slug << "\t" << item.channel << "\t" << item.token << "\t"
                      << item.human_clicks << "\n";
        }
    }
    return kExitOk;
}

// `refgate commissions import --partner P FILE [--dry-run]`: the API's import
// (POST /api/v1/partners/{slug}/commissions), from a file.
int commissions_command(const config::Config& c, const std::vector<std::string>& args,
                        const po::variables_map& vm) {
    if (args.size() != 2 || args[0] != "import" || !vm.count("partner")) {
        std::cerr << "refgate commissions: expected import --partner P FILE [--dry-run]\n"
                  << kUsage;
        return kExitUsage;
    }
    auto format =
        codec::parse_commissions_format(vm.count("format") ? vm["format"].as<std::string>() : "");
    if (!format) {
        std::cerr << "refgate commissions import: --format must be impact or awin\n";
        return kExitUsage;
    }
    const std::string& path = args[1];
    auto text = read_text(path);
    if (!text) {
        std::cerr << "refgate commissions import: cannot read " << path << "\n";
        return kExitFailure;
    }
    bool csv = *format != codec::CommissionsFormat::awin && !path.ends_with(".json");
    if (!csv && nlohmann::json::parse(*text, nullptr, false).is_discarded()) {
        std::cerr << "refgate commissions import: " << path << " is not valid JSON\n";
        return kExitFailure;
    }
    codec::CommissionsInput input = codec::read_commissions(*text, *format, csv);
    auto store = admin::make_pg_commission_store(
        {.database_url = c.database_url, .max_idle_connections = 0, .max_open_connections = 1});
    bool dry_run = vm.count("dry-run") != 0;
    std::string partner = last_option(vm, "partner");
    auto o = admin::import_commissions(*store, {.partner = partner,
                                                .input = std::move(input),
                                                .source = admin::CommissionSource::import,
                                                .dry_run = dry_run});
    if (o.kind == admin::OutcomeKind::not_found) {
        std::cerr << "refgate commissions import: " << o.detail << "\n";
        return kExitFailure;
    }
    const codec::CommissionsReport& report = o.view;
    for (const auto& r : report.refused) {
        std::cerr << "invalid: ";
        if (r.line != 0) std::cerr << "line " << r.line << ": ";
        std::cerr << (r.field.empty() ? "" : r.field + ": ") << r.message << "\n";
    }
    std::cout << "commissions: " << report.recorded.created << " created, "
              << report.recorded.updated << " updated, " << report.recorded.unchanged
              << " unchanged (" << report.recorded.unattributed << " unattributed)"
              << (dry_run ? "; dry run: nothing applied" : "") << "\n";
    if (o.kind == admin::OutcomeKind::invalid) {
        std::cerr << "refgate commissions import: nothing applied, " << report.refused.size()
                  << " problem(s)\n";
        return kExitFailure;
    }
    return report.refused.empty() ? kExitOk : kExitFailure;
}

// Loads the settings and applies the log level; false (after logging why) when they are invalid.
bool load_cli_config(const po::variables_map& vm, const std::string& command,
                     config::Config& config) {
    try {
        std::optional<std::string> file;
        if (vm.count("config")) file = vm["config"].as<std::string>();
        config = config::load_config(file, config::process_env());
        try {
            config::resolve_state_paths(config, config::process_env(), writable_dir);
        } catch (const config::ConfigError&) {
            // Only serve writes state files: migrate or token run fine without a state dir.
            if (command == "serve" || command == "check-config") throw;
        }
    } catch (const config::ConfigError& e) {
        runtime::log::error("config_invalid", {{"error", config::redact_secrets(e.what())}});
        return false;
    }
    runtime::log::Level level = runtime::log::Level::info;
    runtime::log::parse_level(config.log_level, level);
    runtime::log::set_level(level);
    return true;
}

// Every option of every command (the usage text says which command takes which).
po::options_description cli_options() {
    po::options_description options("options");
    options.add_options()("help,h", "show usage")("version", "print the version and exit")(
        "config,c", po::value<std::string>(), "JSON config file")(
        "command", po::value<std::string>(), "command")(
        "args", po::value<std::vector<std::string>>(), "arguments")(
        "name", po::value<std::string>(), "name (token create, user create)")(
        "role", po::value<std::string>(), "role (token create, user create)")(
        "actor", po::value<std::string>(), "who the audit trail names (import, token, user)")(
        "password-stdin", "read the password from standard input (user)")(
        "dry-run", "import: show the changes, apply nothing")(
        "from", po::value<std::string>(),
        "import: another tool's export (prettylinks, thirstyaffiliates, shlink, yourls)")(
        "partner-map", po::value<std::string>(),
        "import --from: a JSON file naming the partners by registrable domain")(
        "lock-codes", "import --from: move referral codes out of the URLs into the partners")(
        "slug", po::value<std::string>(), "check-links, placements: only this link")(
        "partner", po::value<std::vector<std::string>>()->composing(),
        "check-links: only this partner's links; commissions import: the partner; token "
        "create: a partner the token is held to (repeatable)")(
        "scope", po::value<std::vector<std::string>>()->composing(),
        "token create: a scope such as links:read (repeatable; none: what the role allows)")(
        "domain", po::value<std::vector<std::string>>()->composing(),
        "token create: a domain the token is held to (repeatable)")(
        "expires", po::value<std::string>(),
        "token create: when the token stops working: 30d, 12h or an RFC 3339 time")(
        "format", po::value<std::string>(),
        "commissions import: a network's export, impact or awin")(
        "all", "rollups check: every link and day, not a sample");
    return options;
}

// The command named with its arguments; nullopt when there is no such command or its arguments
// do not fit it.
std::optional<int> run_command(const config::Config& config, const std::string& command,
                               const std::vector<std::string>& args, const po::variables_map& vm) {
    if (command == "serve" && args.empty()) return App(config).serve();
    if (command == "check-config" && args.empty()) return check_config(config);
    if (command == "migrate" && args.empty()) {
        auto applied = pg::migrate(config.database_url);
        std::cout << "migrations applied: " << applied.size() << "\n";
        return kExitOk;
    }
    if (command == "import" && args.size() == 1) return import_file(config, args[0], vm);
    if (command == "flush" && args.empty()) return flush(config);
    if (command == "check-links" && args.empty()) {
        auto option = [&](const char* name) {
            return vm.count(name) ? vm[name].as<std::string>() : std::string();
        };
        return check_links(config, option("slug"), last_option(vm, "partner"), REFGATE_VERSION);
    }
    if (command == "rollups") return rollups_command(config, args, vm);
    if (command == "placements" && args.empty()) return placements_command(config, vm);
    if (command == "commissions") return commissions_command(config, args, vm);
    if (command == "token") return token_command(config, args, vm);
    if (command == "user") return user_command(config, args, vm);
    if (command == "export" && args.empty()) {
        std::cout << pg::export_document(config.database_url).dump(2) << "\n";
        return kExitOk;
    }
    return std::nullopt;
}

}  // namespace

int run_cli(int argc, char** argv) {
    po::options_description options = cli_options();
    po::positional_options_description positional;
    positional.add("command", 1).add("args", -1);
    po::variables_map vm;
    try {
        po::store(po::command_line_parser(argc, argv).options(options).positional(positional).run(),
                  vm);
        po::notify(vm);
    } catch (const po::error& e) {
        std::cerr << "refgate: " << e.what() << "\n" << kUsage;
        return kExitUsage;
    }
    if (vm.count("version")) {
        std::cout << "refgate " << REFGATE_VERSION << " (" << REFGATE_GIT_COMMIT << ")\n";
        return kExitOk;
    }
    if (vm.count("help") || !vm.count("command")) {
        (vm.count("help") ? std::cout : std::cerr) << kUsage;
        return vm.count("help") ? kExitOk : kExitUsage;
    }
    std::string command = vm["command"].as<std::string>();
    std::vector<std::string> args;
    if (vm.count("args")) args = vm["args"].as<std::vector<std::string>>();

    config::Config config;
    if (!load_cli_config(vm, command, config)) return kExitUsage;

    try {
        admin::init_console_crypto();
        if (auto code = run_command(config, command, args, vm)) return *code;
    } catch (const pg::DatabaseError& e) {
        runtime::log::error("database_error", {{"command", command}, {"error", e.what()}});
        return kExitFailure;
    } catch (const admin::StoreError& e) {
        runtime::log::error("database_error", {{"command", command}, {"error", e.what()}});
        return kExitFailure;
    } catch (const redis::RedisError& e) {
        runtime::log::error("redis_error", {{"command", command}, {"error", e.what()}});
        return kExitFailure;
    } catch (const std::exception& e) {
        runtime::log::error("command_failed", {{"command", command}, {"error", e.what()}});
        return kExitFailure;
    }
    std::cerr << "refgate: unknown command or wrong arguments: " << command << "\n" << kUsage;
    return kExitUsage;
}

}  // namespace refgate::app
