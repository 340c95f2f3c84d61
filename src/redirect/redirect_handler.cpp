#include "refgate/redirect/redirect_handler.hpp"

#include "refgate/domain/counter_key.hpp"
#include "refgate/domain/location.hpp"
#include "refgate/domain/placement.hpp"
#include "refgate/domain/request_host.hpp"
#include "refgate/runtime/snapshot_store.hpp"

namespace refgate::redirect {
namespace {

constexpr std::string_view kGoPrefix = "/go/";
constexpr std::size_t kLocationRoom = 8192;

// Starts loading the first two cache lines of `text` (a Location is rarely longer).
[[gnu::always_inline]] inline void prefetch_bytes(std::string_view text) {
    __builtin_prefetch(text.data());
    if (text.size() > 64) __builtin_prefetch(text.data() + 64);
}

void not_found(http::Response& response) {
    response.simple_page(404, "Link not found");
    response.add_header("X-Robots-Tag", "noindex, nofollow");
}

}  // namespace

RedirectHandler::RedirectHandler(const runtime::SnapshotStore& store, const domain::Clock& clock,
                                 RedirectOptions options, ClickRecorder* recorder,
                                 const TargetingSources& targeting)
    : reader_(store),
      cap_flags_(store.cap_flags()),
      clock_(clock),
      options_(std::move(options)),
      recorder_(recorder),
      targeting_(targeting) {
    // Placement Locations are written here per redirect: room for the longest destination and
    // then some, so that they allocate nothing.
    dynamic_location_.reserve(kLocationRoom);
    http::Response fixed;
    fixed.add_header("Content-Type", "text/html; charset=utf-8");
    fixed.add_header("Cache-Control", "private, no-store");
    fixed.add_header("X-Robots-Tag", "noindex, nofollow");
    fixed.add_header("Referrer-Policy", options_.referrer_policy);
    // A CR, LF or NUL in the policy (the configuration refuses one) leaves them empty: every
    // redirect is then a 500, as add_header would make it.
    if (fixed.status() == 200) fixed_headers_ = fixed.headers();
}

std::string_view RedirectHandler::slug_of(std::string_view path) {
    if (!path.starts_with(kGoPrefix)) return {};
    std::string_view slug = path.substr(kGoPrefix.size());
    if (slug.ends_with('/')) slug.remove_suffix(1);
    return domain::valid_slug(slug) ? slug : std::string_view{};
}

RedirectHandler::SlugKey RedirectHandler::key_of(std::string_view path) {
    std::string_view slug = slug_of(path);
    if (slug.empty()) return {};
    return {slug, domain::Snapshot::hash_of(slug)};
}

RedirectHandler::SlugKey RedirectHandler::key_of(std::string_view path,
                                                 const http::RequestNotes& notes) const {
    if (notes.handler != this) return key_of(path);
    if (notes.values[0] == 0) return {};
    return {path.substr(kGoPrefix.size(), notes.values[0]), notes.values[1]};
}

void RedirectHandler::prepare(std::string_view path, Parsed, http::RequestNotes& notes) {
    SlugKey key = key_of(path, notes);
    if (notes.handler != this) {
        notes.handler = this;
        notes.values[0] = key.slug.size();  // 0: the path names no link
        notes.values[1] = key.hash;
    }
    if (key.slug.empty()) return;
    const domain::Snapshot* snapshot = reader_.get();
    if (snapshot == nullptr) return;
    // Each load needs the one before it in the cache: one step per call.
    switch (notes.steps++) {
        case 0:
            snapshot->prefetch(key.hash);
            break;
        case 1:
            snapshot->prefetch_entry(key.hash);
            break;
        case 2:
            if (const domain::LinkEntry* link = snapshot->find(key.slug, key.hash)) {
                prefetch_bytes(link->location);
                if (recorder_ != nullptr) recorder_->prefetch_likely(link->id);
            }
            break;
        default:
            break;
    }
}

void RedirectHandler::handle(const http::Request& request, http::Response& response) {
    if (request.method != http::Method::get && request.method != http::Method::head) {
        response.simple_page(405, "Method Not Allowed");
        response.add_header("Allow", "GET, HEAD");
        return;
    }
    SlugKey key = key_of(request.path(), request.notes);
    if (key.slug.empty()) {
        not_found(response);
        return;
    }
    const domain::Snapshot* snapshot = reader_.get();
    if (snapshot == nullptr) {
        response.simple_page(503, "Service Unavailable");
        response.add_header("Retry-After", "1");
        return;
    }
    // Issue 46: the request's host picks the domain; with none defined (and unknown hosts
    // served), nothing is looked up.
    std::uint16_t domain = 0;
    if (snapshot->has_domains() || options_.reject_unknown_host) {
        domain = domain_of(request, *snapshot);
        if (domain == domain::Snapshot::kUnknownDomain) {
            not_found(response);
            return;
        }
    }
    const domain::LinkEntry* link =
        snapshot->find(key.slug, domain::Snapshot::on_domain(key.hash, domain), domain);
    if (link == nullptr) {
        const std::string& elsewhere = snapshot->domains()[domain].not_found;
        if (elsewhere.empty()) {
            not_found(response);
        } else {
            redirect(response, elsewhere, "Continue");
        }
        return;
    }
    // The Location's bytes live apart from the entry: they load while the request is read.
    prefetch_bytes(link->location);
    std::int64_t now = clock_.unix_seconds();
    bool expired = link->expires_at != 0 && now >= link->expires_at;
    // Automatic fallback (issue 44): link health switched the link's own destination away; the
    // flag is set only on links with a fallback. A link with rules decides after its target.
    bool failing = link->default_failing && link->rule_count == 0;
    // Click caps (issue 44): the cap worker found the fleet's human clicks at the cap; the link
    // answers as an expired one (a binary search and one relaxed load, only for a link with a
    // cap; no flags yet: not capped).
    bool capped = false;
    if (link->has_cap) {
        const runtime::CapFlags* flags = cap_flags_.get();
        capped = flags != nullptr && flags->capped(link->id);
    }
    if (link->status != domain::LinkStatus::active || !link->partner_active || expired || failing ||
        capped) {
        answer_fallback(request, response, *link, now);
        return;
    }
    // Read once for the rules and the count. The recorder's trusted proxies decide the client
    // address when there is one (the app gives both the same list).
    ReaderRequest reader =
        ReaderRequest::of(request, recorder_ != nullptr ? recorder_->trusted_proxies()
                                                        : targeting_.trusted_proxies());
    domain::Target target;
    if (link->rule_count != 0) {
        target = targeting_.choose(*snapshot, *link, reader, now);
        // A switched-away rule branch gets the link's own destination while that is healthy.
        if (target.failing) target = domain::Target{};
        if (target.rule == 0 && link->default_failing) {
            answer_fallback(request, response, *link, now);
            return;
        }
    }
    // The click's counter loads while the answer is written.
    std::optional<ClickRecorder::Click> click;
    if (recorder_ != nullptr) click = recorder_->begin(request, reader, link->id, now);
    answer(request, response, *snapshot, *link, target,
           click ? click->validated_channel : std::string_view{});
    if (click) record(*click, *snapshot, *link, target);
}

void RedirectHandler::answer_fallback(const http::Request& request, http::Response& response,
                                      const domain::LinkEntry& link, std::int64_t now) {
    if (!link.fallback.empty()) {
        if (recorder_ != nullptr) recorder_->record(request, link.id, now);
        redirect(response, link.fallback, "Continue");
    } else {
        response.simple_page(410, "This link is no longer available");
        response.add_header("X-Robots-Tag", "noindex, nofollow");
    }
}

std::uint16_t RedirectHandler::domain_of(const http::Request& request,
                                         const domain::Snapshot& snapshot) const {
    std::string_view host = domain::authority_host(
        request.authority.empty() ? request.header("Host") : request.authority);
    std::uint16_t domain = snapshot.domain_of(host);
    if (domain != domain::Snapshot::kUnknownDomain) return domain;
    // No domain defined: the public base URL's host is the default domain's.
    if (!snapshot.has_domains() && !host.empty() && host.size() == options_.default_host.size()) {
        std::array<char, domain::kMaxRequestHost> lower{};
        if (domain::lower_host(host, lower) == options_.default_host) return 0;
    }
    return options_.reject_unknown_host ? domain::Snapshot::kUnknownDomain : 0;
}

void RedirectHandler::answer(const http::Request& request, http::Response& response,
                             const domain::Snapshot& snapshot, const domain::LinkEntry& link,
                             const domain::Target& target, std::string_view channel) {
    // A partner with placements: the Location of this click's channel, from the precomputed one
    // of "direct" with the code and the token of the channel written in their places.
    const domain::PlacementSlots& slots = target.rule != 0 ? target.placement : link.placement;
    if (slots.any()) {
        std::size_t partner_index = target.rule != 0 ? target.partner_index : link.partner_index;
        const domain::Partner& partner = snapshot.partners()[partner_index];
        // The recorder's reading of it when the click is counted (read_channel once a click).
        if (channel.empty()) channel = domain::read_channel(request.query()).channel;
        char token[domain::kMaxToken];
        std::size_t length = domain::write_token(token, snapshot.placement_style(partner_index),
                                                 link.id, link.slug, channel);
        const std::string& code = domain::code_for_channel(partner, channel);
        if (target.rule == 0 && link.utm_passthrough && domain::query_has_utm(request.query())) {
            // Assigned, not moved in: the buffer keeps its room for the next redirect.
            dynamic_location_.assign(domain::build_placement_location(
                link.destination, partner, code, std::string_view(token, length), true,
                request.query()));
        } else {
            std::string_view location = target.rule != 0 ? target.location : link.location;
            domain::write_placed_location(dynamic_location_, location, slots, code,
                                          std::string_view(token, length));
        }
        redirect(response, dynamic_location_, "Continue to ", partner.name);
        return;
    }
    if (target.rule != 0) {
        // A rule's branch: its Location was precomputed with its partner's code. utm_*
        // passthrough applies to the link's own destination only.
        redirect(response, target.location, "Continue to ", snapshot.partner(target).name);
        return;
    }
    if (link.utm_passthrough && domain::query_has_utm(request.query())) {
        dynamic_location_.assign(domain::build_location(link.destination, snapshot.partner(link),
                                                        true, request.query()));
        redirect(response, dynamic_location_, "Continue to ", snapshot.partner(link).name);
        return;
    }
    redirect(response, link.location, "Continue to ", snapshot.partner(link).name);
}

void RedirectHandler::record(const ClickRecorder::Click& click, const domain::Snapshot& snapshot,
                             const domain::LinkEntry& link, const domain::Target& target) {
    // Counted per country and rule for links with rules, where a country database is configured
    // (a targeting counter is a counter key more, within REFGATE_MAX_PENDING_KEYS' bound).
    if (link.rule_count == 0 || !targeting_.has_countries()) {
        recorder_->count(click);
        return;
    }
    ClickTarget where;
    where.country =
        targeting_.looked_up() ? targeting_.last_country() : targeting_.country_of(*click.reader);
    where.rule = target.rule;
    if (target.rule != 0 && snapshot.rules()[link.first_rule + target.rule - 1].split)
        where.branch = target.branch + 1u;
    recorder_->count(click, &where);
}

void RedirectHandler::redirect(http::Response& response, std::string_view location,
                               std::string_view label, std::string_view label_name) const {
    if (fixed_headers_.empty()) {
        response.simple_page(500, "Internal Server Error");
        return;
    }
    response.set_status(302);
    response.add_header("Location", location);
    if (response.status() != 302) return;  // a Location that cannot be a header: a 500 page
    response.add_checked_headers(fixed_headers_);
    response.body().clear();
    domain::append_redirect_page(response.body(), location, label, label_name);
}

}  // namespace refgate::redirect
