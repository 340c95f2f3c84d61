// The admin service's link rules: a link's partner must exist and its destination and fallback
// must be within the partner's allowed domains; both are stored in canonical form.

#include <map>
#include <set>

#include "outcomes.hpp"
#include "refgate/admin/admin_json.hpp"
#include "refgate/admin/admin_service.hpp"
#include "refgate/codec/import_document.hpp"
#include "refgate/codec/stored_objects.hpp"
#include "refgate/domain/placement.hpp"
#include "service_change.hpp"

namespace refgate::admin {
namespace {

using LinkResult = Result<codec::LinkView>;

}  // namespace

Result<codec::Page<codec::LinkView>> AdminService::list_links(const LinkFilter& f) {
    return read<Result<codec::Page<codec::LinkView>>>([&](AdminRows& rows) {
        // One more than asked, to know whether there is a next page.
        auto found = rows.links(f, f.limit + 1);
        codec::Page<codec::LinkView> page;
        for (std::size_t i = 0; i < found.size(); ++i) {
            if (i == f.limit) {
                page.next_cursor = found[i - 1].link.slug;
                break;
            }
            page.items.push_back(view_of(found[i]));
        }
        return answered(OutcomeKind::ok, std::move(page));
    });
}

LinkResult AdminService::get_link(const std::string& slug) {
    return read<LinkResult>([&](AdminRows& rows) -> LinkResult {
        auto row = rows.link(slug, RowLock::none);
        if (!row) return refused(OutcomeKind::not_found, "no link '" + slug + "'");
        return answered(OutcomeKind::ok, view_of(*row));
    });
}

LinkResult AdminService::create_link(const Actor& actor, const codec::NewLink& command) {
    if (!command.errors.empty()) return refused(command.errors);
    domain::Link link = command.link;
    return write<LinkResult>([&](AdminRows& rows) -> LinkResult {
        if (auto errors = validate(rows, link); !errors.empty()) return refused(errors);
        if (rows.link_on(link.domain, link.slug, RowLock::none) || !rows.insert_link(link))
            return refused(OutcomeKind::conflict, "a link '" + domain::link_key(link) + "' exists");
        codec::LinkView after = view_of(*rows.link_on(link.domain, link.slug, RowLock::none));
        rows.insert_audit(audit_record(actor.name, "link", domain::link_key(link), "create",
                                       nullptr, view_json(after)));
        rows.commit();
        return answered(OutcomeKind::created, std::move(after));
    });
}

LinkResult AdminService::update_link(const Actor& actor, const std::string& slug,
                                     const Precondition& pre, const codec::LinkPatch& patch) {
    return write<LinkResult>([&](AdminRows& rows) {
        auto find = [&](const std::string& s, RowLock lock) { return rows.link(s, lock); };
        return change(rows, "link", actor, slug, pre, "update", find,
                      [&](const LinkRow& row) -> std::optional<LinkResult> {
                          if (patch.sets("slug") && patch.fields.slug != row.link.slug)
                              return refused({{"slug", "cannot be changed"}});
                          if (patch.sets("domain") && patch.fields.domain != row.link.domain)
                              return refused({{"domain", "cannot be changed"}});
                          if (!patch.errors.empty()) return refused(patch.errors);
                          domain::Link link = codec::apply_patch(patch, row.link);
                          if (auto errors = validate(rows, link); !errors.empty())
                              return refused(errors);
                          if (codec::same_fields(link, row.link))
                              return answered(OutcomeKind::ok, view_of(row));  // unchanged
                          rows.update_link(row.id, link);
                          return std::nullopt;
                      });
    });
}

LinkResult AdminService::delete_link(const Actor& actor, const std::string& slug,
                                     const Precondition& pre) {
    return write<LinkResult>([&](AdminRows& rows) {
        auto find = [&](const std::string& s, RowLock lock) { return rows.link(s, lock); };
        return change(rows, "link", actor, slug, pre, "delete", find,
                      [&](const LinkRow& row) -> std::optional<LinkResult> {
                          rows.delete_link(row.id);
                          return std::nullopt;
                      });
    });
}

// The link's partner and its rules' partners must exist (locked against a concurrent narrowing
// of their domains) and every destination and the fallback must be within its partner's domains;
// all become canonical.
std::vector<codec::FieldError> AdminService::validate(AdminRows& rows, domain::Link& link) {
    std::map<std::string, std::optional<PartnerRow>> partners;
    auto lookup = [&](const std::string& slug) -> const domain::Partner* {
        auto it = partners.find(slug);
        if (it == partners.end())
            it = partners.emplace(slug, rows.partner(slug, RowLock::share)).first;
        return it->second ? &it->second->partner : nullptr;
    };
    std::vector<domain::Link> links{link};
    auto issues = codec::validate_links(links, lookup, options_.url_policy);
    link = links.front();
    auto errors = field_errors(issues);
    // Issue 46: a link is on a domain that exists; naming the default's host is the default.
    if (!link.domain.empty()) {
        auto domain = rows.domain(link.domain, RowLock::share);
        if (!domain) {
            errors.push_back({"domain", "'" + link.domain + "' is not a domain"});
        } else if (domain->domain.is_default) {
            link.domain.clear();
        }
    }
    // Readable placement tokens of the partners the link routes to must stay apart from those
    // of their other links. Two saves of one partner's links hold its row's share lock together,
    // so each partner's check is a turn of its own (lock_readable_tokens, in slug order: no
    // deadlock between saves naming the same partners), and reads the links committed before it.
    // A partner save holds its row's update lock, which already excludes these saves.
    std::set<std::string> routed;
    routed.insert(link.partner);
    for (const auto& rule : link.rules) {
        routed.insert(rule.partner);
        for (const auto& b : rule.split) routed.insert(b.partner);
    }
    for (const auto& slug : routed) {
        const domain::Partner* partner = slug.empty() ? nullptr : lookup(slug);
        if (partner == nullptr || partner->subid_param.empty() ||
            partner->subid_style != domain::SubidStyle::readable)
            continue;
        rows.lock_readable_tokens(slug);
        std::vector<domain::Link> all = rows.links_naming(slug);
        // The link as stored before this save (a slug is unique per domain; the default
        // domain's links have none, as `link` has by now).
        std::erase_if(all, [&](const domain::Link& l) {
            return l.slug == link.slug &&
                   (l.domain == link.domain || (link.id != 0 && l.id == link.id));
        });
        all.push_back(link);
        if (auto problem = domain::readable_token_problem(*partner, all))
            errors.push_back({"slug", *problem});
    }
    return errors;
}

}  // namespace refgate::admin
