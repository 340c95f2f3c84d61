#include "refgate/pg/stored_rows.hpp"

#include <chrono>
#include <map>
#include <span>
#include <stdexcept>

#include "refgate/codec/import_document.hpp"
#include "refgate/pg/array_text.hpp"

namespace refgate::pg {
namespace {

using Json = nlohmann::ordered_json;

std::vector<std::string> text_array_field(const pqxx::field& field) {
    std::vector<std::string> values;
    auto parser = field.as_array();
    for (auto [juncture, value] = parser.get_next(); juncture != pqxx::array_parser::done;
         std::tie(juncture, value) = parser.get_next()) {
        if (juncture == pqxx::array_parser::string_value) values.push_back(std::move(value));
    }
    return values;
}

codec::Stamps stamps_of(const pqxx::row& row) {
    return {row["created_us"].as<std::int64_t>(), row["updated_us"].as<std::int64_t>(),
            row["version"].as<std::int64_t>()};
}

// A partner's or link's columns besides id, slug and the stamps: how each is selected and read
// into the object, and written as a member of the jsonb record that the admin's insert and
// update and the import's upsert take (jsonb_to_record(set)). A new column is one entry in
// kPartnerColumns or kLinkColumns.
template <typename T>
struct Column {
    std::string_view column;
    std::string_view key;          // the record's member and the select's name; empty: column
    std::string_view record_type;  // its type in the jsonb record
    std::string_view value;        // its value from the record r; empty: r.<key>
    std::string_view select;       // what is selected (AS <key>); empty: <alias>.<column>
    void (*read)(const pqxx::field&, T&);
    Json (*write)(const T&);

    std::string name() const { return std::string(key.empty() ? column : key); }
};

template <typename T>
struct Table {
    std::string_view name;
    std::string_view alias;     // in the selects
    std::string_view conflict;  // the import's ON CONFLICT target
    std::span<const Column<T>> columns;
};

constexpr Column<domain::Partner> kPartnerColumns[] = {
    {"name", "", "text", "", "",
     [](const pqxx::field& f, domain::Partner& p) { p.name = f.c_str(); },
     [](const domain::Partner& p) { return Json(p.name); }},
    {"ref_param", "", "text", "", "",
     [](const pqxx::field& f, domain::Partner& p) { p.ref_param = f.c_str(); },
     [](const domain::Partner& p) { return Json(p.ref_param); }},
    {"ref_code", "", "text", "", "",
     [](const pqxx::field& f, domain::Partner& p) { p.ref_code = f.c_str(); },
     [](const domain::Partner& p) { return Json(p.ref_code); }},
    {"allowed_domains", "", "jsonb", "ARRAY(SELECT jsonb_array_elements_text(r.allowed_domains))",
     "", [](const pqxx::field& f, domain::Partner& p) { p.allowed_domains = text_array_field(f); },
     [](const domain::Partner& p) { return Json(p.allowed_domains); }},
    // Stored as an array of pairs: the order editors gave them.
    {"extra_params", "", "jsonb", "", "p.extra_params::text",
     [](const pqxx::field& f, domain::Partner& p) {
         for (const auto& pair : Json::parse(f.c_str()))
             p.extra_params.emplace_back(pair.at(0).get<std::string>(),
                                         pair.at(1).get<std::string>());
     },
     [](const domain::Partner& p) {
         Json pairs = Json::array();
         for (const auto& [key, value] : p.extra_params) pairs.push_back({key, value});
         return pairs;
     }},
    {"active", "", "boolean", "", "",
     [](const pqxx::field& f, domain::Partner& p) { p.active = f.as<bool>(); },
     [](const domain::Partner& p) { return Json(p.active); }},
    {"subid_param", "", "text", "", "",
     [](const pqxx::field& f, domain::Partner& p) {
         if (!f.is_null()) p.subid_param = f.c_str();
     },
     [](const domain::Partner& p) { return p.subid_param.empty() ? Json() : Json(p.subid_param); }},
    {"subid_style", "", "text", "", "",
     [](const pqxx::field& f, domain::Partner& p) {
         if (std::string_view(f.c_str()) == "readable")
             p.subid_style = domain::SubidStyle::readable;
     },
     [](const domain::Partner& p) {
         return Json(p.subid_style == domain::SubidStyle::readable ? "readable" : "opaque");
     }},
    {"subid_charset", "", "text", "", "",
     [](const pqxx::field& f, domain::Partner& p) { p.subid_charset = f.c_str(); },
     [](const domain::Partner& p) { return Json(p.subid_charset); }},
    {"channel_codes", "", "jsonb", "", "p.channel_codes::text",
     [](const pqxx::field& f, domain::Partner& p) {
         for (const auto& code : Json::parse(f.c_str()))
             p.channel_codes.push_back(
                 {code.at("channel").get<std::string>(), code.at("ref_code").get<std::string>()});
     },
     [](const domain::Partner& p) {
         Json codes = Json::array();
         for (const auto& c : p.channel_codes)
             codes.push_back({{"channel", c.channel}, {"ref_code", c.ref_code}});
         return codes;
     }},
};

constexpr Column<domain::Link> kLinkColumns[] = {
    // By the partner's slug: the selects join refgate_partners p.
    {"partner_id", "partner", "text", "(SELECT id FROM refgate_partners WHERE slug = r.partner)",
     "p.slug", [](const pqxx::field& f, domain::Link& l) { l.partner = f.c_str(); },
     [](const domain::Link& l) { return Json(l.partner); }},
    {"destination", "", "text", "", "",
     [](const pqxx::field& f, domain::Link& l) { l.destination = f.c_str(); },
     [](const domain::Link& l) { return Json(l.destination); }},
    {"status", "", "text", "", "",
     [](const pqxx::field& f, domain::Link& l) {
         auto status = domain::parse_link_status(f.c_str());
         if (!status) throw std::runtime_error("link " + l.slug + ": bad status");
         l.status = *status;
     },
     [](const domain::Link& l) { return Json(std::string(to_string(l.status))); }},
    // Read as Unix seconds, written as RFC 3339.
    {"expires_at", "", "text", "r.expires_at::timestamptz",
     "floor(extract(epoch FROM l.expires_at))::bigint",
     [](const pqxx::field& f, domain::Link& l) {
         if (!f.is_null())
             l.expires_at = domain::SysSeconds{std::chrono::seconds{f.as<std::int64_t>()}};
     },
     [](const domain::Link& l) {
         return l.expires_at ? Json(domain::format_rfc3339(*l.expires_at)) : Json();
     }},
    {"fallback", "", "text", "", "",
     [](const pqxx::field& f, domain::Link& l) {
         if (!f.is_null()) l.fallback = f.c_str();
     },
     [](const domain::Link& l) { return l.fallback ? Json(*l.fallback) : Json(); }},
    {"utm_passthrough", "", "boolean", "", "",
     [](const pqxx::field& f, domain::Link& l) { l.utm_passthrough = f.as<bool>(); },
     [](const domain::Link& l) { return Json(l.utm_passthrough); }},
    // Most links have none: not parsed then.
    {"rules", "", "jsonb", "", "CASE WHEN l.rules = '[]' THEN NULL ELSE l.rules::text END",
     [](const pqxx::field& f, domain::Link& l) {
         if (!f.is_null()) l.rules = codec::rules_from_json(Json::parse(f.c_str()));
     },
     [](const domain::Link& l) {
         Json rules = Json::array();
         for (const auto& rule : l.rules) rules.push_back(codec::rule_to_json(rule));
         return rules;
     }},
    {"auto_fallback", "", "boolean", "", "",
     [](const pqxx::field& f, domain::Link& l) { l.auto_fallback = f.as<bool>(); },
     [](const domain::Link& l) { return Json(l.auto_fallback); }},
    {"domain", "", "text", "", "",
     [](const pqxx::field& f, domain::Link& l) {
         if (!f.is_null()) l.domain = f.c_str();
     },
     [](const domain::Link& l) { return l.domain.empty() ? Json() : Json(l.domain); }},
    {"max_human_clicks", "", "bigint", "", "",
     [](const pqxx::field& f, domain::Link& l) {
         if (!f.is_null()) l.max_human_clicks = f.as<std::int64_t>();
     },
     [](const domain::Link& l) { return l.max_human_clicks ? Json(*l.max_human_clicks) : Json(); }},
};

constexpr Table<domain::Partner> kPartners{"refgate_partners", "p", "(slug)", kPartnerColumns};
constexpr Table<domain::Link> kLinks{"refgate_links", "l", "((coalesce(domain, '')), slug)",
                                     kLinkColumns};

// The columns joined by ", ", each as `each` gives it.
template <typename T, typename Each>
std::string joined(const Table<T>& table, Each&& each) {
    std::string out;
    for (const auto& c : table.columns) {
        if (!out.empty()) out += ", ";
        out += each(c);
    }
    return out;
}

template <typename T>
std::string column_names(const Table<T>& table) {
    return joined(table, [](const Column<T>& c) { return std::string(c.column); });
}

// "<select> AS <key>, ...": the columns as read_columns() reads them.
template <typename T>
std::string select_list(const Table<T>& table) {
    return joined(table, [&](const Column<T>& c) {
        return (c.select.empty() ? std::string(table.alias) + "." + std::string(c.column)
                                 : std::string(c.select)) +
               " AS " + c.name();
    });
}

template <typename T>
void read_columns(const Table<T>& table, const pqxx::row& row, T& object) {
    for (const auto& c : table.columns) c.read(row[c.name()], object);
}

template <typename T>
Json record_of(const Table<T>& table, const T& object) {
    Json record{{"slug", object.slug}};
    for (const auto& c : table.columns) record[c.name()] = c.write(object);
    return record;
}

// "SELECT [r.slug, ]<values> FROM jsonb_to_record(set)(<param>) AS r(slug text, <key> <type>,
// ...)": the record's members, with the values the table takes from them.
template <typename T>
std::string values_from(const Table<T>& table, std::string_view function, std::string_view param,
                        bool with_slug = true) {
    std::string values = joined(table, [](const Column<T>& c) {
        return c.value.empty() ? "r." + c.name() : std::string(c.value);
    });
    std::string types = joined(
        table, [](const Column<T>& c) { return c.name() + " " + std::string(c.record_type); });
    return std::string(with_slug ? "SELECT r.slug, " : "SELECT ") + values + " FROM " +
           std::string(function) + "(" + std::string(param) + "::jsonb) AS r(slug text, " + types +
           ")";
}

template <typename T>
std::string write_sql(const Table<T>& table, RowWrite write) {
    std::string name(table.name);
    switch (write) {
        case RowWrite::insert:
            return "INSERT INTO " + name + " (slug, " + column_names(table) + ") " +
                   values_from(table, "jsonb_to_record", "$1");
        case RowWrite::update:
            // Found by id; the slug stays.
            return "UPDATE " + name + " SET (" + column_names(table) + ") = (" +
                   values_from(table, "jsonb_to_record", "$2", false) +
                   "), updated_at = now(), version = version + 1 WHERE id = $1";
        case RowWrite::upsert:
            break;
    }
    // Bumps version and updated_at only when something really changed, so that re-importing
    // the same file is a no-op.
    auto set = joined(table, [](const Column<T>& c) {
        return std::string(c.column) + " = EXCLUDED." + std::string(c.column);
    });
    auto before = joined(table, [](const Column<T>& c) { return "t." + std::string(c.column); });
    auto after =
        joined(table, [](const Column<T>& c) { return "EXCLUDED." + std::string(c.column); });
    return "INSERT INTO " + name + " AS t (slug, " + column_names(table) + ") " +
           values_from(table, "jsonb_to_recordset", "$1") + " ON CONFLICT " +
           std::string(table.conflict) + " DO UPDATE SET " + set +
           ", updated_at = now(), version = t.version + 1 WHERE (" + before +
           ") IS DISTINCT FROM (" + after + ") RETURNING id";
}

}  // namespace

const std::string kPartnerSelect = "SELECT p.id, p.slug, " + select_list(kPartners) + ", " +
                                   micros("p.created_at") + " AS created_us, " +
                                   micros("p.updated_at") +
                                   " AS updated_us, p.version FROM refgate_partners p ";

const std::string kLinkColumnsSelect = "l.id, l.slug, " + select_list(kLinks);

const std::string kLinkSelect =
    "SELECT " + kLinkColumnsSelect +
    ", (SELECT json_agg(json_build_object('branch', f.branch, 'reason', f.reason, 'detail', "
    "f.detail, 'since', floor(extract(epoch FROM f.since))::bigint) ORDER BY f.branch)::text "
    "FROM refgate_link_fallbacks f WHERE f.link_id = l.id) AS fallback_switches, " +
    micros("l.created_at") + " AS created_us, " + micros("l.updated_at") +
    " AS updated_us, l.version FROM refgate_links l JOIN refgate_partners p ON p.id = "
    "l.partner_id ";

const std::string& partner_write_sql(RowWrite write) {
    static const std::string sql[] = {write_sql(kPartners, RowWrite::insert),
                                      write_sql(kPartners, RowWrite::update),
                                      write_sql(kPartners, RowWrite::upsert)};
    return sql[static_cast<int>(write)];
}

const std::string& link_write_sql(RowWrite write) {
    static const std::string sql[] = {write_sql(kLinks, RowWrite::insert),
                                      write_sql(kLinks, RowWrite::update),
                                      write_sql(kLinks, RowWrite::upsert)};
    return sql[static_cast<int>(write)];
}

nlohmann::ordered_json partner_record(const domain::Partner& p) { return record_of(kPartners, p); }
nlohmann::ordered_json link_record(const domain::Link& l) { return record_of(kLinks, l); }

domain::Link read_link_columns(const pqxx::row& row) {
    domain::Link l;
    l.id = row["id"].as<std::int64_t>();
    l.slug = row["slug"].c_str();
    read_columns(kLinks, row, l);
    return l;
}

StoredPartner stored_partner(const pqxx::row& row) {
    StoredPartner stored;
    domain::Partner& p = stored.partner;
    p.id = row["id"].as<std::int64_t>();
    p.slug = row["slug"].c_str();
    read_columns(kPartners, row, p);
    stored.stamps = stamps_of(row);
    return stored;
}

StoredLink stored_link(const pqxx::row& row) {
    StoredLink stored;
    stored.link = read_link_columns(row);
    domain::Link& l = stored.link;
    if (auto switches = row["fallback_switches"]; !switches.is_null()) {
        for (const auto& s : Json::parse(switches.c_str()))
            l.fallback_switches.push_back(
                {s.at("branch").get<std::string>(), s.at("reason").get<std::string>(),
                 s.at("detail").get<std::string>(), s.at("since").get<std::int64_t>()});
    }
    stored.stamps = stamps_of(row);
    return stored;
}

void add_scheduled_codes(pqxx::transaction_base& tx, std::vector<StoredPartner>& partners) {
    if (partners.empty()) return;
    std::map<std::int64_t, domain::Partner*> by_id;
    ArrayText ids;
    for (auto& stored : partners) {
        by_id[stored.partner.id] = &stored.partner;
        ids.add_number(stored.partner.id);
    }
    auto codes = tx.exec_params(
        "SELECT partner_id, coalesce(ref_code, '') AS ref_code, channel_codes::text AS "
        "channel_codes, floor(extract(epoch FROM valid_from))::bigint AS valid_from_s "
        "FROM refgate_code_schedule WHERE partner_id = ANY($1::bigint[]) "
        "ORDER BY partner_id, valid_from",
        ids.finish());
    for (const auto& c : codes) {
        domain::ScheduledCode code{
            domain::SysSeconds{std::chrono::seconds{c["valid_from_s"].as<std::int64_t>()}},
            c["ref_code"].c_str(), std::nullopt};
        if (!c["channel_codes"].is_null()) {
            code.channel_codes.emplace();
            for (const auto& entry : Json::parse(c["channel_codes"].c_str()))
                code.channel_codes->push_back({entry.at("channel").get<std::string>(),
                                               entry.at("ref_code").get<std::string>()});
        }
        by_id.at(c["partner_id"].as<std::int64_t>())->scheduled_codes.push_back(std::move(code));
    }
}

LinkName parse_link_name(const std::string& name) {
    auto slash = name.find('/');
    if (slash == std::string::npos) return {{}, name};
    return {name.substr(0, slash), name.substr(slash + 1)};
}

std::string link_named_sql(int first) {
    std::string host = "$" + std::to_string(first);
    std::string slug = "$" + std::to_string(first + 1);
    return "l.slug = " + slug + " AND (" + host + "::text = '' OR l.domain = " + host +
           " OR (l.domain IS NULL AND EXISTS (SELECT 1 FROM refgate_domains d WHERE d.host = " +
           host + " AND d.is_default))) ORDER BY l.domain NULLS FIRST LIMIT 1";
}

}  // namespace refgate::pg
