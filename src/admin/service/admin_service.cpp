#include "refgate/admin/admin_service.hpp"

#include <stdexcept>

#include "outcomes.hpp"
#include "refgate/admin/admin_json.hpp"
#include "refgate/admin/tokens.hpp"
#include "refgate/codec/stored_objects.hpp"

namespace refgate::admin {
namespace {

using Json = nlohmann::ordered_json;

std::string no_disclosure(const std::string& key, const std::string& locale) {
    return "no disclosure '" + key + "' for locale '" + locale + "'";
}

// What a new token asks for beyond its role, or the partners it names that do not exist.
std::vector<codec::FieldError> grant_errors(AdminRows& rows, const NewToken& token) {
    std::vector<codec::FieldError> errors;
    if (token.scopes) {
        Scopes beyond = *token.scopes & ~role_scopes(token.role);
        for (auto name : scope_names(beyond)) {
            errors.push_back({"scopes", "the " + std::string(to_string(token.role)) +
                                            " role does not allow " + std::string(name)});
        }
    }
    for (const auto& slug : token.reach.partners) {
        if (!rows.partner(slug, RowLock::share))
            errors.push_back({"partners", "no partner '" + slug + "'"});
    }
    return errors;
}

Json grant_json(const TokenRow& row) {
    TokenView view = view_of(row);
    return Json{{"name", view.name},
                {"role", view.role},
                {"scopes", view.scopes},
                {"partners", view.partners},
                {"domains", view.domains},
                {"expires_at", view.expires_at.empty() ? Json() : Json(view.expires_at)}};
}

// Throws std::invalid_argument on a bad name or a name that names a live token, and
// GrantRefused when the token would exceed its role or names an unknown partner.
struct GrantRefused {
    std::vector<codec::FieldError> errors;
};

std::string insert_token(AdminRows& rows, const std::string& actor, const NewToken& command) {
    const std::string& name = command.name;
    if (!valid_token_name(name))
        throw std::invalid_argument("token name must match [A-Za-z0-9][A-Za-z0-9_.@-]{0,63}");
    if (auto errors = grant_errors(rows, command); !errors.empty())
        throw GrantRefused{std::move(errors)};
    std::string token = generate_token();
    if (rows.lock_live_token(name))
        throw std::invalid_argument("a live token is already named '" + name + "'");
    TokenRow row;
    row.name = name;
    row.role = std::string(to_string(command.role));
    row.hash_hex = hash_token(token);
    if (command.scopes) {
        row.scopes.emplace();
        for (auto s : scope_names(*command.scopes)) row.scopes->emplace_back(s);
    }
    row.partners = command.reach.partners;
    row.domains = command.reach.domains;
    row.expires_at = command.expires_at;
    rows.insert_token(row);
    rows.insert_audit(audit_record(actor, "token", name, "create", nullptr, grant_json(row)));
    return token;
}

bool revoke(AdminRows& rows, const std::string& actor, const std::string& name) {
    auto role = rows.revoke_token(name);
    if (!role) return false;
    Json before{{"name", name}, {"role", *role}};
    Json after = before;
    after["revoked"] = true;
    rows.insert_audit(audit_record(actor, "token", name, "revoke", before, after));
    return true;
}

}  // namespace

AdminService::AdminService(std::unique_ptr<AdminRepository> repository, AdminServiceOptions options)
    : repository_(std::move(repository)), options_(std::move(options)) {}

std::optional<StoredToken> AdminService::find_token(const std::string& hash_hex) {
    std::optional<StoredToken> found;
    repository_->run(AdminRepository::Access::write, [&](AdminRows& rows) {
        auto token = rows.live_token_by_hash(hash_hex);
        if (!token) return;
        auto role = parse_role(token->role);
        if (!role) return;
        if (!token->expired) rows.touch_token(token->id);
        rows.commit();
        Actor actor{.name = token->name, .role = *role};
        actor.scopes = role_scopes(*role);
        if (token->scopes) {
            Scopes given = 0;
            for (const auto& s : *token->scopes) given |= parse_scope(s).value_or(scope::none);
            actor.scopes &= given;  // never beyond the role, whatever the row says
        }
        actor.reach.partners = token->partners;
        actor.reach.domains = token->domains;
        found = StoredToken{std::move(actor), token->hash_hex, token->expires_at, token->expired};
    });
    return found;
}

Result<codec::Page<AuditView>> AdminService::audit(const AuditFilter& filter) {
    return read<Result<codec::Page<AuditView>>>([&](AdminRows& rows) {
        codec::Page<AuditView> page;
        for (const auto& row : rows.audit(filter)) page.items.push_back(view_of(row));
        return answered(OutcomeKind::ok, std::move(page));
    });
}

Result<codec::Page<TokenView>> AdminService::list_tokens() {
    return read<Result<codec::Page<TokenView>>>([](AdminRows& rows) {
        codec::Page<TokenView> page;
        for (const auto& t : rows.tokens("")) page.items.push_back(view_of(t));
        return answered(OutcomeKind::ok, std::move(page));
    });
}

Result<CreatedToken> AdminService::create_token(const Actor& actor, const NewToken& command) {
    if (!command.errors.empty()) return refused(command.errors);
    return write<Result<CreatedToken>>([&](AdminRows& rows) -> Result<CreatedToken> {
        std::string token;
        try {
            token = insert_token(rows, actor.name, command);
        } catch (const std::invalid_argument& e) {
            return refused(OutcomeKind::conflict, e.what());
        } catch (GrantRefused& e) {
            return refused(std::move(e.errors));
        }
        CreatedToken created{view_of(rows.tokens(command.name).at(0)), token};
        rows.commit();
        return answered(OutcomeKind::created, std::move(created));
    });
}

Result<TokenView> AdminService::revoke_token(const Actor& actor, const std::string& name,
                                             const Precondition& pre) {
    return write<Result<TokenView>>([&](AdminRows& rows) -> Result<TokenView> {
        auto live = rows.tokens(name);
        if (live.empty()) return refused(OutcomeKind::not_found, "no live token '" + name + "'");
        TokenView before = view_of(live.front());
        if (!precondition_holds(pre, live.front().id))
            return refused(OutcomeKind::stale, "that name names a newer token now");
        revoke(rows, actor.name, name);
        rows.commit();
        return answered(OutcomeKind::deleted, std::move(before));
    });
}

std::string AdminService::create_token_text(const std::string& actor, const NewToken& command) {
    std::string token;
    repository_->run(AdminRepository::Access::write, [&](AdminRows& rows) {
        try {
            token = insert_token(rows, actor, command);
        } catch (const GrantRefused& e) {
            std::string message;
            for (const auto& error : e.errors)
                message += (message.empty() ? "" : "; ") + error.field + ": " + error.message;
            throw std::invalid_argument(message);
        }
        rows.commit();
    });
    return token;
}

std::vector<TokenView> AdminService::token_list() {
    std::vector<TokenView> tokens;
    repository_->run(AdminRepository::Access::read, [&](AdminRows& rows) {
        for (auto& t : rows.tokens("")) tokens.push_back(view_of(t));
    });
    return tokens;
}

bool AdminService::revoke_token_named(const std::string& actor, const std::string& name) {
    bool revoked = false;
    repository_->run(AdminRepository::Access::write, [&](AdminRows& rows) {
        revoked = revoke(rows, actor, name);
        if (revoked) rows.commit();
    });
    return revoked;
}

Result<codec::Page<codec::DisclosureView>> AdminService::list_disclosures() {
    return read<Result<codec::Page<codec::DisclosureView>>>([](AdminRows& rows) {
        codec::Page<codec::DisclosureView> page;
        for (const auto& d : rows.disclosures()) page.items.push_back(view_of(d));
        return answered(OutcomeKind::ok, std::move(page));
    });
}

Result<codec::DisclosureView> AdminService::get_disclosure(const std::string& key,
                                                           const std::string& locale) {
    return read<Result<codec::DisclosureView>>(
        [&](AdminRows& rows) -> Result<codec::DisclosureView> {
            auto current = rows.disclosure(key, locale);
            if (!current) return refused(OutcomeKind::not_found, no_disclosure(key, locale));
            return answered(OutcomeKind::ok, view_of(*current));
        });
}

Result<codec::DisclosureView> AdminService::put_disclosure(const Actor& actor,
                                                           const std::string& key,
                                                           const std::string& locale,
                                                           const PutPrecondition& pre,
                                                           const codec::DisclosureInput& put) {
    using DisclosureResult = Result<codec::DisclosureView>;
    if (!put.errors.empty()) return refused(put.errors);
    domain::Disclosure d = put.disclosure;
    return write<DisclosureResult>([&](AdminRows& rows) -> DisclosureResult {
        // Writers of one (key, locale) take turns, so versions are consecutive.
        rows.lock_disclosure(key, locale);
        auto current = rows.disclosure(key, locale);
        d.version = 1;
        if (!current) {
            if (pre.if_match)
                return refused(OutcomeKind::stale, no_disclosure(key, locale) + " yet");
        } else {
            const domain::Disclosure& now = current->disclosure;
            if (pre.if_none_match_any) return refused(OutcomeKind::stale, "the disclosure exists");
            if (!pre.if_match)
                return refused(OutcomeKind::precondition_required,
                               "send If-Match with the ETag of the disclosure you read");
            if (!precondition_holds(*pre.if_match, now.version))
                return refused(OutcomeKind::stale, "the disclosure changed; fetch it again");
            if (now.text == d.text && now.html == d.html && now.html_given == d.html_given)
                return answered(OutcomeKind::ok, view_of(*current));  // nothing changed
            d.version = now.version + 1;
        }
        if (!rows.insert_disclosure(d, actor.name))
            return refused(OutcomeKind::stale, "the disclosure changed; fetch it again");
        codec::DisclosureView after = view_of(*rows.disclosure(key, locale));
        rows.insert_audit(audit_record(
            actor.name, "disclosure", key + "/" + locale, current ? "update" : "create",
            current ? view_json(view_of(*current)) : nullptr, view_json(after)));
        rows.commit();
        return answered(current ? OutcomeKind::ok : OutcomeKind::created, std::move(after));
    });
}

}  // namespace refgate::admin
