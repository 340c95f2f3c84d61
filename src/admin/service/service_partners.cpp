// The admin service's partner rules: create, change, schedule a code, delete, code history.

#include <algorithm>
#include <map>

#include "outcomes.hpp"
#include "refgate/admin/admin_json.hpp"
#include "refgate/admin/admin_service.hpp"
#include "refgate/codec/import_document.hpp"
#include "refgate/codec/stored_objects.hpp"
#include "refgate/domain/placement.hpp"
#include "refgate/domain/time.hpp"
#include "service_change.hpp"

namespace refgate::admin {
namespace {

using PartnerResult = Result<codec::PartnerView>;

std::int64_t micros(domain::SysSeconds t) { return t.time_since_epoch().count() * 1'000'000; }

// The history, then what is scheduled; each code is live until the next one takes over.
codec::Page<codec::CodeView> code_items(const PartnerRow& partner,
                                        const std::vector<CodeHistoryRow>& history) {
    const auto& scheduled = partner.partner.scheduled_codes;
    std::optional<std::int64_t> first_scheduled;
    if (!scheduled.empty()) first_scheduled = micros(scheduled.front().valid_from);
    codec::Page<codec::CodeView> page;
    for (const auto& h : history) {
        page.items.push_back({h.ref_param, h.ref_code, h.live_from_us,
                              h.live_until_us ? h.live_until_us : first_scheduled, false,
                              h.channel_codes});
    }
    // Each switch sets what it names; the rest carries over from the one before.
    std::string code = partner.partner.ref_code;
    std::vector<domain::ChannelCode> channel_codes = partner.partner.channel_codes;
    for (std::size_t i = 0; i < scheduled.size(); ++i) {
        std::optional<std::int64_t> next;
        if (i + 1 < scheduled.size()) next = micros(scheduled[i + 1].valid_from);
        if (!scheduled[i].ref_code.empty()) code = scheduled[i].ref_code;
        if (scheduled[i].channel_codes) channel_codes = *scheduled[i].channel_codes;
        page.items.push_back({partner.partner.ref_param, code, micros(scheduled[i].valid_from),
                              next, true, channel_codes});
    }
    return page;
}

}  // namespace

Result<codec::Page<codec::PartnerView>> AdminService::list_partners(const std::string& query) {
    return read<Result<codec::Page<codec::PartnerView>>>([&](AdminRows& rows) {
        codec::Page<codec::PartnerView> page;
        for (const auto& row : rows.partners(query)) page.items.push_back(view_of(row));
        return answered(OutcomeKind::ok, std::move(page));
    });
}

PartnerResult AdminService::get_partner(const std::string& slug) {
    return read<PartnerResult>([&](AdminRows& rows) -> PartnerResult {
        auto row = rows.partner(slug, RowLock::none);
        if (!row) return refused(OutcomeKind::not_found, "no partner '" + slug + "'");
        return answered(OutcomeKind::ok, view_of(*row));
    });
}

PartnerResult AdminService::create_partner(const Actor& actor, const codec::NewPartner& command) {
    if (!command.errors.empty()) return refused(command.errors);
    const domain::Partner& p = command.partner;
    return write<PartnerResult>([&](AdminRows& rows) -> PartnerResult {
        if (rows.partner(p.slug, RowLock::none) || !rows.insert_partner(p))
            return refused(OutcomeKind::conflict, "a partner '" + p.slug + "' exists");
        codec::PartnerView after = view_of(*rows.partner(p.slug, RowLock::none));
        rows.insert_audit(
            audit_record(actor.name, "partner", p.slug, "create", nullptr, view_json(after)));
        rows.commit();
        return answered(OutcomeKind::created, std::move(after));
    });
}

PartnerResult AdminService::update_partner(const Actor& actor, const std::string& slug,
                                           const Precondition& pre,
                                           const codec::PartnerPatch& patch) {
    return write<PartnerResult>([&](AdminRows& rows) {
        auto find = [&](const std::string& s, RowLock lock) { return rows.partner(s, lock); };
        return change(rows, "partner", actor, slug, pre, "update", find,
                      [&](const PartnerRow& row) -> std::optional<PartnerResult> {
                          if (patch.schedule) {
                              if (!patch.errors.empty()) return refused(patch.errors);
                              return schedule_code(rows, actor, row, *patch.schedule);
                          }
                          return update_partner_row(rows, row, patch);
                      });
    });
}

PartnerResult AdminService::delete_partner(const Actor& actor, const std::string& slug,
                                           const Precondition& pre) {
    return write<PartnerResult>([&](AdminRows& rows) {
        auto find = [&](const std::string& s, RowLock lock) { return rows.partner(s, lock); };
        return change(rows, "partner", actor, slug, pre, "delete", find,
                      [&](const PartnerRow& row) -> std::optional<PartnerResult> {
                          if (auto count = rows.count_links(row.id); count > 0) {
                              return refused(OutcomeKind::conflict,
                                             "partner '" + slug + "' still has " +
                                                 std::to_string(count) +
                                                 " link(s); delete or move them first");
                          }
                          // A rule naming a partner that no longer exists would drop out of
                          // every snapshot and make the export impossible to import.
                          std::string named;
                          for (const auto& link : rows.links_naming(slug)) {
                              for (const auto& branch : domain::branches_to(link, slug))
                                  named += (named.empty() ? "" : ", ") + link.slug + " " + branch;
                          }
                          if (!named.empty()) {
                              return refused(OutcomeKind::conflict,
                                             "partner '" + slug + "' is still named by " + named +
                                                 "; change those rules first");
                          }
                          rows.delete_partner(row.id);
                          return std::nullopt;
                      });
    });
}

Result<codec::Page<codec::CodeView>> AdminService::partner_codes(const std::string& slug) {
    // A code whose moment passed while no instance was running is written first, so the history
    // answers with the moment it took over.
    repository_->run(AdminRepository::Access::write, [](AdminRows& rows) {
        rows.apply_due_codes();
        rows.commit();
    });
    return read<Result<codec::Page<codec::CodeView>>>(
        [&](AdminRows& rows) -> Result<codec::Page<codec::CodeView>> {
            auto partner = rows.partner(slug, RowLock::none);
            if (!partner) return refused(OutcomeKind::not_found, "no partner '" + slug + "'");
            return answered(OutcomeKind::ok, code_items(*partner, rows.code_history(partner->id)));
        });
}

// PATCH {"ref_code": C, "valid_from": T}: C takes over at T on every instance; with
// "channel_codes" (with or without ref_code) the list takes over at T too. A null ref_code
// cancels what is scheduled at T; the same T again replaces it.
std::optional<PartnerResult> AdminService::schedule_code(AdminRows& rows, const Actor& actor,
                                                         const PartnerRow& row,
                                                         const codec::CodeSchedule& schedule) {
    if (!schedule.ref_code && !schedule.channel_codes) {
        if (!rows.cancel_code(row.id, schedule.valid_from))
            return refused(OutcomeKind::not_found, "no code is scheduled at " +
                                                       domain::format_rfc3339(schedule.valid_from));
    } else {
        // Compared in seconds: a valid_from centuries away does not fit the clock's nanoseconds
        // (the year 1013 overflowed the conversion, found by tests/fuzz/fuzz_admin_bodies.cpp).
        if (!(schedule.valid_from > std::chrono::floor<std::chrono::seconds>(clock().now())))
            return refused(
                {{"valid_from", "must be in the future; PATCH ref_code alone to change it now"}});
        rows.schedule_code(
            row.id, {schedule.valid_from, schedule.ref_code.value_or(""), schedule.channel_codes},
            actor.name);
    }
    // A new version, so that editors working from the old one get 412.
    rows.touch_partner(row.id);
    return std::nullopt;
}

// A partner PATCH without valid_from: the merged object must pass the import rules, and every
// stored link that names the partner (as its own or in a rule or split branch) must still pass
// the rules the snapshot builder and the import apply, with the changed partner in its place and
// every other partner as stored.
std::optional<PartnerResult> AdminService::update_partner_row(AdminRows& rows,
                                                              const PartnerRow& row,
                                                              const codec::PartnerPatch& patch) {
    if (patch.sets("slug") && patch.fields.slug != row.partner.slug)
        return refused({{"slug", "cannot be changed"}});
    codec::PatchedPartner patched = codec::apply_patch(patch, row.partner);
    if (!patched.errors.empty()) return refused(std::move(patched.errors));
    const domain::Partner& p = patched.partner;
    if (codec::same_fields(row.partner, p))
        return answered(OutcomeKind::ok, view_of(row));  // nothing changed
    auto links = rows.links_naming(p.slug);
    // The others are locked against a concurrent change, as a link save locks them.
    std::map<std::string, std::optional<PartnerRow>> others;
    auto lookup = [&](const std::string& slug) -> const domain::Partner* {
        if (slug == p.slug) return &p;
        auto it = others.find(slug);
        if (it == others.end()) it = others.emplace(slug, rows.partner(slug, RowLock::share)).first;
        return it->second ? &it->second->partner : nullptr;
    };
    auto issues = codec::validate_links(links, lookup, options_.url_policy, "stored links");
    if (!issues.empty()) {
        std::vector<codec::FieldError> errors;
        for (const auto& issue : issues)
            errors.push_back({"allowed_domains", "would exclude " + issue.entry + ": " +
                                                     issue.field + " " + issue.message});
        return refused(std::move(errors));
    }
    if (auto problem = domain::readable_token_problem(p, links))
        return refused({{"subid_style", *problem}});
    rows.update_partner(row.id, p);
    return std::nullopt;
}

}  // namespace refgate::admin
