// The admin service's partner rules: create, change, schedule a code, delete, code history.

#include <algorithm>
#include <map>

#include "outcomes.hpp"
#include "refgate/admin/admin_json.hpp"
#include "refgate/admin/admin_service.hpp"
#include "refgate/codec/import_document.hpp"
#include "refgate/domain/placement.hpp"
#include "refgate/domain/time.hpp"
#include "service_change.hpp"

namespace refgate::admin {
namespace {

using Json = nlohmann::ordered_json;

std::int64_t micros(SysSeconds t) { return t.time_since_epoch().count() * 1'000'000; }

Json partner_in_import(const Json& object) { return Json{{"partners", Json::array({object})}}; }

// The history, then what is scheduled; each code is live until the next one takes over.
Json code_items(const PartnerRow& partner, const std::vector<CodeHistoryRow>& history) {
    const auto& scheduled = partner.partner.scheduled_codes;
    auto at = [](std::optional<std::int64_t> us) { return us ? Json(format_micros(*us)) : Json(); };
    std::optional<std::int64_t> first_scheduled;
    if (!scheduled.empty()) first_scheduled = micros(scheduled.front().valid_from);
    Json items = Json::array();
    for (const auto& h : history) {
        items.push_back({{"ref_param", h.ref_param},
                         {"ref_code", h.ref_code},
                         {"live_from", format_micros(h.live_from_us)},
                         {"live_until", at(h.live_until_us ? h.live_until_us : first_scheduled)},
                         {"scheduled", false}});
    }
    for (std::size_t i = 0; i < scheduled.size(); ++i) {
        std::optional<std::int64_t> next;
        if (i + 1 < scheduled.size()) next = micros(scheduled[i + 1].valid_from);
        items.push_back({{"ref_param", partner.partner.ref_param},
                         {"ref_code", scheduled[i].ref_code},
                         {"live_from", format_micros(micros(scheduled[i].valid_from))},
                         {"live_until", at(next)},
                         {"scheduled", true}});
    }
    return items;
}

}  // namespace

Outcome AdminService::list_partners(const std::string& query) {
    return read([&](AdminRows& rows) {
        Json items = Json::array();
        for (const auto& row : rows.partners(query)) items.push_back(partner_object(row));
        return object(OutcomeKind::ok, collection(std::move(items)));
    });
}

Outcome AdminService::get_partner(const std::string& slug) {
    return read([&](AdminRows& rows) {
        auto row = rows.partner(slug, RowLock::none);
        if (!row) return simple(OutcomeKind::not_found, "no partner '" + slug + "'");
        return object(OutcomeKind::ok, partner_object(*row));
    });
}

Outcome AdminService::create_partner(const Actor& actor, const Json& body) {
    auto parsed = parse_import(partner_in_import(body));
    if (!parsed.issues.empty()) return invalid(field_errors(parsed.issues));
    const Partner& p = parsed.document.partners.front();
    return write([&](AdminRows& rows) {
        if (rows.partner(p.slug, RowLock::none) || !rows.insert_partner(p))
            return simple(OutcomeKind::conflict, "a partner '" + p.slug + "' exists");
        Json after = partner_object(*rows.partner(p.slug, RowLock::none));
        rows.insert_audit(audit_record(actor.name, "partner", p.slug, "create", nullptr, after));
        rows.commit();
        return object(OutcomeKind::created, std::move(after));
    });
}

Outcome AdminService::update_partner(const Actor& actor, const std::string& slug,
                                     const Precondition& pre, const Json& patch) {
    return write([&](AdminRows& rows) {
        auto find = [&](const std::string& s, RowLock lock) { return rows.partner(s, lock); };
        return change(rows, "partner", actor, slug, pre, "update", find, partner_object,
                      [&](const PartnerRow& row) -> std::optional<Outcome> {
                          if (patch.contains("scheduled_codes"))
                              return invalid({{"scheduled_codes",
                                               "is read-only; schedule a code "
                                               "with ref_code and valid_from"}});
                          if (patch.contains("valid_from"))
                              return schedule_code(rows, actor, row, patch);
                          return update_partner_row(rows, row, patch);
                      });
    });
}

Outcome AdminService::delete_partner(const Actor& actor, const std::string& slug,
                                     const Precondition& pre) {
    return write([&](AdminRows& rows) {
        auto find = [&](const std::string& s, RowLock lock) { return rows.partner(s, lock); };
        return change(
            rows, "partner", actor, slug, pre, "delete", find, partner_object,
            [&](const PartnerRow& row) -> std::optional<Outcome> {
                if (auto count = rows.count_links(row.id); count > 0) {
                    return simple(OutcomeKind::conflict, "partner '" + slug + "' still has " +
                                                             std::to_string(count) +
                                                             " link(s); delete or move them first");
                }
                // A rule naming a partner that no longer exists would drop out of
                // every snapshot and make the export impossible to import.
                std::string named;
                for (const auto& link : rows.links_naming(slug)) {
                    for (const auto& branch : branches_to(link, slug))
                        named += (named.empty() ? "" : ", ") + link.slug + " " + branch;
                }
                if (!named.empty()) {
                    return simple(OutcomeKind::conflict, "partner '" + slug +
                                                             "' is still named by " + named +
                                                             "; change those rules first");
                }
                rows.delete_partner(row.id);
                return std::nullopt;
            });
    });
}

Outcome AdminService::partner_codes(const std::string& slug) {
    // A code whose moment passed while no instance was running is written first, so the history
    // answers with the moment it took over.
    write([](AdminRows& rows) {
        rows.apply_due_codes();
        rows.commit();
        return Outcome{};
    });
    return read([&](AdminRows& rows) {
        auto partner = rows.partner(slug, RowLock::none);
        if (!partner) return simple(OutcomeKind::not_found, "no partner '" + slug + "'");
        return object(OutcomeKind::ok,
                      collection(code_items(*partner, rows.code_history(partner->id))));
    });
}

// PATCH {"ref_code": C, "valid_from": T}: C takes over at T on every instance. A null ref_code
// cancels what is scheduled at T; the same T again replaces it.
std::optional<Outcome> AdminService::schedule_code(AdminRows& rows, const Actor& actor,
                                                   const PartnerRow& row, const Json& patch) {
    std::vector<FieldError> errors;
    for (const auto& [key, value] : patch.items()) {
        if (key != "ref_code" && key != "valid_from")
            errors.push_back({key, "cannot be changed together with valid_from"});
    }
    const Json& when = patch.at("valid_from");
    std::optional<SysSeconds> valid_from;
    if (when.is_string()) valid_from = parse_rfc3339(when.get<std::string>());
    if (!valid_from)
        errors.push_back({"valid_from", "must be an RFC 3339 time, e.g. 2026-12-01T00:00:00Z"});
    auto code = patch.find("ref_code");
    if (code == patch.end()) {
        errors.push_back({"ref_code", "is required with valid_from (null cancels)"});
    } else if (!code->is_null()) {
        Json merged = writable(partner_object(row));
        merged["ref_code"] = *code;
        auto parsed = parse_import(partner_in_import(merged));
        for (auto& e : field_errors(parsed.issues)) errors.push_back(std::move(e));
    }
    if (!errors.empty()) return invalid(std::move(errors));
    if (code->is_null()) {
        if (!rows.cancel_code(row.id, *valid_from))
            return simple(OutcomeKind::not_found,
                          "no code is scheduled at " + format_rfc3339(*valid_from));
    } else {
        const Clock& clock = options_.clock != nullptr ? *options_.clock : system_clock_;
        // Compared in seconds: a valid_from centuries away does not fit the clock's nanoseconds
        // (the year 1013 overflowed the conversion, found by tests/fuzz/fuzz_admin_bodies.cpp).
        if (!(*valid_from > std::chrono::floor<std::chrono::seconds>(clock.now())))
            return invalid(
                {{"valid_from", "must be in the future; PATCH ref_code alone to change it now"}});
        rows.schedule_code(row.id, {*valid_from, code->get<std::string>()}, actor.name);
    }
    // A new version, so that editors working from the old one get 412.
    rows.touch_partner(row.id);
    return std::nullopt;
}

// A partner PATCH without valid_from: the merged object must pass the import rules, and every
// stored link that names the partner (as its own or in a rule or split branch) must still pass
// the rules the snapshot builder and the import apply, with the changed partner in its place and
// every other partner as stored.
std::optional<Outcome> AdminService::update_partner_row(AdminRows& rows, const PartnerRow& row,
                                                        const Json& patch) {
    Json merged = writable(partner_object(row));
    merged.merge_patch(patch);
    if (merged.value("slug", std::string()) != row.partner.slug)
        return invalid({{"slug", "cannot be changed"}});
    auto parsed = parse_import(partner_in_import(merged));
    if (!parsed.issues.empty()) return invalid(field_errors(parsed.issues));
    const Partner& p = parsed.document.partners.front();
    if (partner_to_json(row.partner) == partner_to_json(p))
        return object(OutcomeKind::ok, partner_object(row));  // nothing changed
    auto links = rows.links_naming(p.slug);
    // The others are locked against a concurrent change, as a link save locks them.
    std::map<std::string, std::optional<PartnerRow>> others;
    auto lookup = [&](const std::string& slug) -> const Partner* {
        if (slug == p.slug) return &p;
        auto it = others.find(slug);
        if (it == others.end()) it = others.emplace(slug, rows.partner(slug, RowLock::share)).first;
        return it->second ? &it->second->partner : nullptr;
    };
    auto issues = validate_links(links, lookup, options_.url_policy, "stored links");
    if (!issues.empty()) {
        std::vector<FieldError> errors;
        for (const auto& issue : issues)
            errors.push_back({"allowed_domains", "would exclude " + issue.entry + ": " +
                                                     issue.field + " " + issue.message});
        return invalid(std::move(errors));
    }
    if (auto problem = readable_token_problem(p, links))
        return invalid({{"subid_style", *problem}});
    rows.update_partner(row.id, p);
    return std::nullopt;
}

}  // namespace refgate::admin
