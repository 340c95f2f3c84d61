#include "support/builders.hpp"

#include <utility>

#include "refgate/domain/html.hpp"

namespace refgate::testing {

domain::Partner tailscale() {
    domain::Partner p;
    p.id = 1;
    p.slug = "tailscale";
    p.name = "Tailscale";
    p.ref_param = "ref";
    p.ref_code = "picks42";
    p.allowed_domains = {"tailscale.com"};
    p.extra_params = {{"utm_medium", "affiliate"}};
    return p;
}

domain::Partner shop() {
    domain::Partner p;
    p.slug = "shop";
    p.ref_param = "ref";
    p.ref_code = "picks42";
    p.allowed_domains = {"shop.example"};
    return p;
}

domain::Disclosure disclosure_version(std::string key, std::string locale, std::int64_t v,
                                      std::string text) {
    domain::Disclosure d;
    d.key = std::move(key);
    d.locale = std::move(locale);
    d.version = v;
    d.text = std::move(text);
    d.html = domain::text_to_html(d.text);
    d.updated_at = "2026-11-" + std::to_string(10 + v) + "T12:00:00Z";
    return d;
}

domain::Link make_link(std::string slug, std::string destination, std::string partner) {
    domain::Link l;
    l.slug = std::move(slug);
    l.partner = std::move(partner);
    l.destination = std::move(destination);
    return l;
}

std::shared_ptr<const domain::Snapshot> make_snapshot(std::vector<domain::Partner> partners,
                                                      std::vector<domain::Link> links,
                                                      std::uint64_t version, std::string source) {
    return domain::Snapshot::build(version, std::move(partners), std::move(links),
                                   domain::UrlPolicy{}, std::move(source));
}

}  // namespace refgate::testing
