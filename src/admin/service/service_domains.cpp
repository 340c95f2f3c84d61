// The admin service's branded domains (issue 46): read, created or replaced whole, deleted,
// audited like country groups. Exactly one domain is the default once any exists: a domain
// becomes the default by a PUT with "default": true (the old default steps down in the same
// transaction); the default cannot step down by itself nor be deleted while others exist.

#include "outcomes.hpp"
#include "refgate/admin/admin_json.hpp"
#include "refgate/admin/admin_service.hpp"
#include "refgate/codec/domains_json.hpp"
#include "refgate/codec/stored_objects.hpp"

namespace refgate::admin {
namespace {

using DomainResult = Result<codec::DomainView>;

constexpr const char* kDomainEntity = "domain";

std::string no_domain(const std::string& host) { return "no domain '" + host + "'"; }

}  // namespace

Result<codec::Page<codec::DomainView>> AdminService::list_domains() {
    return read<Result<codec::Page<codec::DomainView>>>([&](AdminRows& rows) {
        codec::Page<codec::DomainView> page;
        page.items = rows.domains();
        return answered(OutcomeKind::ok, std::move(page));
    });
}

DomainResult AdminService::get_domain(const std::string& host) {
    return read<DomainResult>([&](AdminRows& rows) -> DomainResult {
        auto row = rows.domain(host, RowLock::none);
        if (!row) return refused(OutcomeKind::not_found, no_domain(host));
        return answered(OutcomeKind::ok, std::move(*row));
    });
}

DomainResult AdminService::put_domain(const Actor& actor, const std::string& host,
                                      const PutPrecondition& pre, const codec::DomainPut& put) {
    if (!put.errors.empty()) return refused(put.errors);
    const domain::Domain& domain = put.domain;
    return write<DomainResult>([&](AdminRows& rows) -> DomainResult {
        auto current = rows.domain(host, RowLock::update);
        if (!current) {
            if (pre.if_match) return refused(OutcomeKind::stale, no_domain(host) + " yet");
            if (!domain.is_default && rows.domains().empty())
                return refused({{"default", "the first domain must be the default"}});
        } else {
            if (pre.if_none_match_any) return refused(OutcomeKind::stale, "the domain exists");
            if (!pre.if_match)
                return refused(OutcomeKind::precondition_required,
                               "send If-Match with the ETag of the domain you read");
            if (!precondition_holds(*pre.if_match, current->stamps.version))
                return refused(OutcomeKind::stale, "the domain changed; fetch it again");
            if (current->domain == domain) return answered(OutcomeKind::ok, std::move(*current));
            if (current->domain.is_default && !domain.is_default)
                return refused({{"default",
                                 "make another domain the default instead: exactly one domain "
                                 "is the default"}});
        }
        std::optional<codec::DomainView> old_default;
        if (domain.is_default) {
            for (auto& d : rows.domains()) {
                if (d.domain.is_default && d.domain.host != host) old_default = std::move(d);
            }
        }
        if (!rows.put_domain(domain, !current))
            return refused(OutcomeKind::stale, "the domain exists");
        codec::DomainView after = *rows.domain(host, RowLock::none);
        if (old_default) {
            auto stepped_down = rows.domain(old_default->domain.host, RowLock::none);
            rows.insert_audit(audit_record(actor.name, kDomainEntity, old_default->domain.host,
                                           "update", view_json(*old_default),
                                           view_json(*stepped_down)));
        }
        rows.insert_audit(audit_record(actor.name, kDomainEntity, host,
                                       current ? "update" : "create",
                                       current ? view_json(*current) : nullptr, view_json(after)));
        rows.commit();
        return answered(current ? OutcomeKind::ok : OutcomeKind::created, std::move(after));
    });
}

DomainResult AdminService::delete_domain(const Actor& actor, const std::string& host,
                                         const Precondition& pre) {
    return write<DomainResult>([&](AdminRows& rows) -> DomainResult {
        auto current = rows.domain(host, RowLock::update);
        if (!current) return refused(OutcomeKind::not_found, no_domain(host));
        if (!precondition_holds(pre, current->stamps.version))
            return refused(OutcomeKind::stale, "the domain changed; fetch it again");
        if (auto n = rows.count_domain_links(host); n > 0)
            return refused(OutcomeKind::conflict, "the domain still has " + std::to_string(n) +
                                                      " link(s); move or delete them first");
        if (current->domain.is_default && rows.domains().size() > 1)
            return refused(OutcomeKind::conflict,
                           "the domain is the default; make another domain the default first");
        rows.delete_domain(host);
        rows.insert_audit(
            audit_record(actor.name, kDomainEntity, host, "delete", view_json(*current), nullptr));
        rows.commit();
        return answered(OutcomeKind::deleted, std::move(*current));
    });
}

}  // namespace refgate::admin
