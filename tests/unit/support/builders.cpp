#include "support/builders.hpp"

#include <utility>

#include "refgate/domain/html.hpp"

namespace refgate::testing {

Partner tailscale() {
    Partner p;
    p.id = 1;
    p.slug = "tailscale";
    p.name = "Tailscale";
    p.ref_param = "ref";
    p.ref_code = "picks42";
    p.allowed_domains = {"tailscale.com"};
    p.extra_params = {{"utm_medium", "affiliate"}};
    return p;
}

Partner shop() {
    Partner p;
    p.slug = "shop";
    p.ref_param = "ref";
    p.ref_code = "picks42";
    p.allowed_domains = {"shop.example"};
    return p;
}

Disclosure disclosure_version(std::string key, std::string locale, std::int64_t v,
                              std::string text) {
    Disclosure d;
    d.key = std::move(key);
    d.locale = std::move(locale);
    d.version = v;
    d.text = std::move(text);
    d.html = text_to_html(d.text);
    d.updated_at = "2026-11-" + std::to_string(10 + v) + "T12:00:00Z";
    return d;
}

Link make_link(std::string slug, std::string destination, std::string partner) {
    Link l;
    l.slug = std::move(slug);
    l.partner = std::move(partner);
    l.destination = std::move(destination);
    return l;
}

std::shared_ptr<const Snapshot> make_snapshot(std::vector<Partner> partners,
                                              std::vector<Link> links, std::uint64_t version,
                                              std::string source) {
    return Snapshot::build(version, std::move(partners), std::move(links), UrlPolicy{},
                           std::move(source));
}

}  // namespace refgate::testing
