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

}  // namespace

const std::string kPartnerSelect =
    "SELECT p.id, p.slug, p.name, p.ref_param, p.ref_code, p.allowed_domains, "
    "p.extra_params::text AS extra_params, p.active, p.subid_param, p.subid_style, "
    "p.subid_charset, p.channel_codes::text AS channel_codes, " +
    micros("p.created_at") + " AS created_us, " + micros("p.updated_at") +
    " AS updated_us, p.version FROM refgate_partners p ";

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
    p.name = row["name"].c_str();
    p.ref_param = row["ref_param"].c_str();
    p.ref_code = row["ref_code"].c_str();
    p.allowed_domains = text_array_field(row["allowed_domains"]);
    // Stored as an array of pairs: the order editors gave them.
    for (const auto& pair : Json::parse(row["extra_params"].c_str()))
        p.extra_params.emplace_back(pair.at(0).get<std::string>(), pair.at(1).get<std::string>());
    p.active = row["active"].as<bool>();
    if (!row["subid_param"].is_null()) p.subid_param = row["subid_param"].c_str();
    if (std::string_view(row["subid_style"].c_str()) == "readable")
        p.subid_style = SubidStyle::readable;
    p.subid_charset = row["subid_charset"].c_str();
    for (const auto& code : Json::parse(row["channel_codes"].c_str()))
        p.channel_codes.push_back(
            {code.at("channel").get<std::string>(), code.at("ref_code").get<std::string>()});
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
