// The admin service's link rules: a link's partner must exist and its destination and fallback
// must be within the partner's allowed domains; both are stored in canonical form.

#include <map>
#include <set>

#include "outcomes.hpp"
#include "refgate/admin/admin_json.hpp"
#include "refgate/admin/admin_service.hpp"
#include "refgate/codec/import_document.hpp"
#include "refgate/domain/placement.hpp"
#include "service_change.hpp"

namespace refgate::admin {
namespace {

using Json = nlohmann::ordered_json;

Json link_in_import(const Json& object) { return Json{{"links", Json::array({object})}}; }

}  // namespace

Outcome AdminService::list_links(const LinkFilter& f) {
    return read([&](AdminRows& rows) {
        // One more than asked, to know whether there is a next page.
        auto found = rows.links(f, f.limit + 1);
        Json items = Json::array();
        Json next = nullptr;
        for (std::size_t i = 0; i < found.size(); ++i) {
            if (i == f.limit) {
                next = found[i - 1].link.slug;
                break;
            }
            items.push_back(link_object(found[i]));
        }
        return object(OutcomeKind::ok, collection(std::move(items), std::move(next)));
    });
}

Outcome AdminService::get_link(const std::string& slug) {
    return read([&](AdminRows& rows) {
        auto row = rows.link(slug, RowLock::none);
        if (!row) return simple(OutcomeKind::not_found, "no link '" + slug + "'");
        return object(OutcomeKind::ok, link_object(*row));
    });
}

Outcome AdminService::create_link(const Actor& actor, const Json& body) {
    auto parsed = parse_import(link_in_import(body));
    if (!parsed.issues.empty()) return invalid(field_errors(parsed.issues));
    Link link = parsed.document.links.front();
    return write([&](AdminRows& rows) {
        if (auto errors = validate(rows, link); !errors.empty()) return invalid(errors);
        if (rows.link(link.slug, RowLock::none) || !rows.insert_link(link))
            return simple(OutcomeKind::conflict, "a link '" + link.slug + "' exists");
        Json after = link_object(*rows.link(link.slug, RowLock::none));
        rows.insert_audit(audit_record(actor.name, "link", link.slug, "create", nullptr, after));
        rows.commit();
        return object(OutcomeKind::created, std::move(after));
    });
}

Outcome AdminService::update_link(const Actor& actor, const std::string& slug,
                                  const Precondition& pre, const Json& patch) {
    return write([&](AdminRows& rows) {
        auto find = [&](const std::string& s, RowLock lock) { return rows.link(s, lock); };
        return change(rows, "link", actor, slug, pre, "update", find, link_object,
                      [&](const LinkRow& row) -> std::optional<Outcome> {
                          Json merged = writable(link_object(row));
                          merged.merge_patch(patch);
                          if (merged.value("slug", std::string()) != slug)
                              return invalid({{"slug", "cannot be changed"}});
                          auto parsed = parse_import(link_in_import(merged));
                          if (!parsed.issues.empty()) return invalid(field_errors(parsed.issues));
                          Link link = parsed.document.links.front();
                          if (auto errors = validate(rows, link); !errors.empty())
                              return invalid(errors);
                          if (link_to_json(link) == link_to_json(row.link))
                              return object(OutcomeKind::ok, link_object(row));  // unchanged
                          rows.update_link(row.id, link);
                          return std::nullopt;
                      });
    });
}

Outcome AdminService::delete_link(const Actor& actor, const std::string& slug,
                                  const Precondition& pre) {
    return write([&](AdminRows& rows) {
        auto find = [&](const std::string& s, RowLock lock) { return rows.link(s, lock); };
        return change(rows, "link", actor, slug, pre, "delete", find, link_object,
                      [&](const LinkRow& row) -> std::optional<Outcome> {
                          rows.delete_link(row.id);
                          return std::nullopt;
                      });
    });
}

// The link's partner and its rules' partners must exist (locked against a concurrent narrowing
// of their domains) and every destination and the fallback must be within its partner's domains;
// all become canonical.
std::vector<FieldError> AdminService::validate(AdminRows& rows, Link& link) {
    std::map<std::string, std::optional<PartnerRow>> partners;
    auto lookup = [&](const std::string& slug) -> const Partner* {
        auto it = partners.find(slug);
        if (it == partners.end())
            it = partners.emplace(slug, rows.partner(slug, RowLock::share)).first;
        return it->second ? &it->second->partner : nullptr;
    };
    std::vector<Link> links{link};
    auto issues = validate_links(links, lookup, options_.url_policy);
    link = links.front();
    auto errors = field_errors(issues);
    // Readable placement tokens of the partners the link routes to must stay apart from those
    // of their other links.
    std::set<std::string> checked;
    auto check = [&](const std::string& slug) {
        if (slug.empty() || !checked.insert(slug).second) return;
        const Partner* partner = lookup(slug);
        if (partner == nullptr || partner->subid_param.empty() ||
            partner->subid_style != SubidStyle::readable)
            return;
        std::vector<Link> all = rows.links_naming(slug);
        std::erase_if(all, [&](const Link& l) { return l.slug == link.slug; });
        all.push_back(link);
        if (auto problem = readable_token_problem(*partner, all))
            errors.push_back({"slug", *problem});
    };
    check(link.partner);
    for (const auto& rule : link.rules) {
        check(rule.partner);
        for (const auto& b : rule.split) check(b.partner);
    }
    return errors;
}

}  // namespace refgate::admin
