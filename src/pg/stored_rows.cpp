#include "refgate/pg/stored_rows.hpp"

#include <chrono>
#include <map>

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

Stamps stamps_of(const pqxx::row& row) {
    return {row["created_us"].as<std::int64_t>(), row["updated_us"].as<std::int64_t>(),
            row["version"].as<std::int64_t>()};
}

// The partner's columns besides id, slug and the stamps: how each is selected, read into the
// Partner, and written as a member of the jsonb record that the admin's insert and update and
// the import's upsert take (jsonb_to_record(set)). A new partner column is one entry here.
struct PartnerColumn {
    std::string_view name;
    std::string_view record_type;  // its type in the jsonb record
    std::string_view value;        // its value from the record r; empty: r.<name>
    std::string_view select;       // how it is selected (AS <name>); empty: p.<name>
    void (*read)(const pqxx::field&, Partner&);
    Json (*write)(const Partner&);
};

const PartnerColumn kPartnerColumns[] = {
    {"name", "text", "", "", [](const pqxx::field& f, Partner& p) { p.name = f.c_str(); },
     [](const Partner& p) { return Json(p.name); }},
    {"ref_param", "text", "", "", [](const pqxx::field& f, Partner& p) { p.ref_param = f.c_str(); },
     [](const Partner& p) { return Json(p.ref_param); }},
    {"ref_code", "text", "", "", [](const pqxx::field& f, Partner& p) { p.ref_code = f.c_str(); },
     [](const Partner& p) { return Json(p.ref_code); }},
    {"allowed_domains", "jsonb", "ARRAY(SELECT jsonb_array_elements_text(r.allowed_domains))", "",
     [](const pqxx::field& f, Partner& p) { p.allowed_domains = text_array_field(f); },
     [](const Partner& p) { return Json(p.allowed_domains); }},
    // Stored as an array of pairs: the order editors gave them.
    {"extra_params", "jsonb", "", "p.extra_params::text",
     [](const pqxx::field& f, Partner& p) {
         for (const auto& pair : Json::parse(f.c_str()))
             p.extra_params.emplace_back(pair.at(0).get<std::string>(),
                                         pair.at(1).get<std::string>());
     },
     [](const Partner& p) {
         Json pairs = Json::array();
         for (const auto& [key, value] : p.extra_params) pairs.push_back({key, value});
         return pairs;
     }},
    {"active", "boolean", "", "", [](const pqxx::field& f, Partner& p) { p.active = f.as<bool>(); },
     [](const Partner& p) { return Json(p.active); }},
    {"subid_param", "text", "", "",
     [](const pqxx::field& f, Partner& p) {
         if (!f.is_null()) p.subid_param = f.c_str();
     },
     [](const Partner& p) { return p.subid_param.empty() ? Json() : Json(p.subid_param); }},
    {"subid_style", "text", "", "",
     [](const pqxx::field& f, Partner& p) {
         if (std::string_view(f.c_str()) == "readable") p.subid_style = SubidStyle::readable;
     },
     [](const Partner& p) {
         return Json(p.subid_style == SubidStyle::readable ? "readable" : "opaque");
     }},
    {"subid_charset", "text", "", "",
     [](const pqxx::field& f, Partner& p) { p.subid_charset = f.c_str(); },
     [](const Partner& p) { return Json(p.subid_charset); }},
    {"channel_codes", "jsonb", "", "p.channel_codes::text",
     [](const pqxx::field& f, Partner& p) {
         for (const auto& code : Json::parse(f.c_str()))
             p.channel_codes.push_back(
                 {code.at("channel").get<std::string>(), code.at("ref_code").get<std::string>()});
     },
     [](const Partner& p) {
         Json codes = Json::array();
         for (const auto& c : p.channel_codes)
             codes.push_back({{"channel", c.channel}, {"ref_code", c.ref_code}});
         return codes;
     }},
};

// The columns joined by ", ", each as `each` gives it.
template <typename Each>
std::string partner_columns(Each&& each) {
    std::string out;
    for (const auto& c : kPartnerColumns) {
        if (!out.empty()) out += ", ";
        out += each(c);
    }
    return out;
}

std::string column_names() {
    return partner_columns([](const PartnerColumn& c) { return std::string(c.name); });
}

// "SELECT [r.slug, ]<values> FROM jsonb_to_record(set)(<param>) AS r(slug text, <column>
// <type>, ...)": the record's columns, with the values the table takes from them.
std::string partner_values_from(std::string_view function, std::string_view param,
                                bool with_slug = true) {
    std::string values = partner_columns([](const PartnerColumn& c) {
        return c.value.empty() ? "r." + std::string(c.name) : std::string(c.value);
    });
    std::string types = partner_columns([](const PartnerColumn& c) {
        return std::string(c.name) + " " + std::string(c.record_type);
    });
    return std::string(with_slug ? "SELECT r.slug, " : "SELECT ") + values + " FROM " +
           std::string(function) + "(" + std::string(param) + "::jsonb) AS r(slug text, " + types +
           ")";
}

std::string partner_insert_sql() {
    return "INSERT INTO refgate_partners (slug, " + column_names() + ") " +
           partner_values_from("jsonb_to_record", "$1");
}

// The row is found by id; its slug stays.
std::string partner_update_sql() {
    return "UPDATE refgate_partners SET (" + column_names() + ") = (" +
           partner_values_from("jsonb_to_record", "$2", false) +
           "), updated_at = now(), version = version + 1 WHERE id = $1";
}

// Bumps version and updated_at only when something really changed, so that re-importing the
// same file is a no-op.
std::string partner_upsert_sql() {
    std::string set = partner_columns([](const PartnerColumn& c) {
        return std::string(c.name) + " = EXCLUDED." + std::string(c.name);
    });
    std::string old_values =
        partner_columns([](const PartnerColumn& c) { return "t." + std::string(c.name); });
    std::string new_values =
        partner_columns([](const PartnerColumn& c) { return "EXCLUDED." + std::string(c.name); });
    return "INSERT INTO refgate_partners AS t (slug, " + column_names() + ") " +
           partner_values_from("jsonb_to_recordset", "$1") + " ON CONFLICT (slug) DO UPDATE SET " +
           set + ", updated_at = now(), version = t.version + 1 WHERE (" + old_values +
           ") IS DISTINCT FROM (" + new_values + ") RETURNING id";
}

}  // namespace

const std::string kPartnerSelect =
    "SELECT p.id, p.slug, " + partner_columns([](const PartnerColumn& c) {
        return c.select.empty() ? "p." + std::string(c.name)
                                : std::string(c.select) + " AS " + std::string(c.name);
    }) +
    ", " + micros("p.created_at") + " AS created_us, " + micros("p.updated_at") +
    " AS updated_us, p.version FROM refgate_partners p ";

const std::string& partner_write_sql(PartnerWrite write) {
    static const std::string insert = partner_insert_sql(), update = partner_update_sql(),
                             upsert = partner_upsert_sql();
    switch (write) {
        case PartnerWrite::insert:
            return insert;
        case PartnerWrite::update:
            return update;
        case PartnerWrite::upsert:
            return upsert;
    }
    return insert;
}

nlohmann::ordered_json partner_record(const Partner& p) {
    Json record{{"slug", p.slug}};
    for (const auto& c : kPartnerColumns) record[std::string(c.name)] = c.write(p);
    return record;
}

const std::string kLinkSelect =
    "SELECT l.id, l.slug, p.slug AS partner, l.destination, l.status, "
    "floor(extract(epoch FROM l.expires_at))::bigint AS expires_s, l.fallback, "
    "l.utm_passthrough, l.auto_fallback, l.max_human_clicks, (SELECT "
    "json_agg(json_build_object('branch', f.branch, "
    "'reason', f.reason, 'detail', f.detail, 'since', floor(extract(epoch FROM f.since))::bigint) "
    "ORDER BY f.branch)::text FROM refgate_link_fallbacks f WHERE f.link_id = l.id) AS "
    "fallback_switches, " +
    micros("l.created_at") + " AS created_us, " + micros("l.updated_at") +
    " AS updated_us, l.version, l.rules::text AS rules, l.domain FROM refgate_links l "
    "JOIN refgate_partners p ON p.id = l.partner_id ";

StoredPartner stored_partner(const pqxx::row& row) {
    StoredPartner stored;
    Partner& p = stored.partner;
    p.id = row["id"].as<std::int64_t>();
    p.slug = row["slug"].c_str();
    for (const auto& c : kPartnerColumns) c.read(row[std::string(c.name)], p);
    stored.stamps = stamps_of(row);
    return stored;
}

StoredLink stored_link(const pqxx::row& row) {
    StoredLink stored;
    Link& l = stored.link;
    l.id = row["id"].as<std::int64_t>();
    l.slug = row["slug"].c_str();
    l.partner = row["partner"].c_str();
    l.destination = row["destination"].c_str();
    l.status = parse_link_status(row["status"].c_str()).value_or(LinkStatus::disabled);
    if (auto expires = row["expires_s"]; !expires.is_null())
        l.expires_at = SysSeconds{std::chrono::seconds{expires.as<std::int64_t>()}};
    if (auto fallback = row["fallback"]; !fallback.is_null()) l.fallback = fallback.c_str();
    l.utm_passthrough = row["utm_passthrough"].as<bool>();
    l.rules = rules_from_json(Json::parse(row["rules"].c_str()));
    l.auto_fallback = row["auto_fallback"].as<bool>();
    if (auto cap = row["max_human_clicks"]; !cap.is_null())
        l.max_human_clicks = cap.as<std::int64_t>();
    if (auto switches = row["fallback_switches"]; !switches.is_null()) {
        for (const auto& s : Json::parse(switches.c_str()))
            l.fallback_switches.push_back(
                {s.at("branch").get<std::string>(), s.at("reason").get<std::string>(),
                 s.at("detail").get<std::string>(), s.at("since").get<std::int64_t>()});
    }
    if (auto domain = row["domain"]; !domain.is_null()) l.domain = domain.c_str();
    stored.stamps = stamps_of(row);
    return stored;
}

void add_scheduled_codes(pqxx::transaction_base& tx, std::vector<StoredPartner>& partners) {
    if (partners.empty()) return;
    std::map<std::int64_t, Partner*> by_id;
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
        ScheduledCode code{SysSeconds{std::chrono::seconds{c["valid_from_s"].as<std::int64_t>()}},
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

}  // namespace refgate::pg
