// The admin API's branded domains (issue 46): /api/v1/domains and /api/v1/domains/{host}.

#include <array>

#include "api.hpp"
#include "refgate/codec/domains_json.hpp"

namespace refgate::admin {
namespace {

using http::Method;

constexpr std::array kDomainRoutes{
    Route{Method::get, "GET", "/api/v1/domains", Role::viewer, Operation::list_domains},
    Route{Method::get, "GET", "/api/v1/domains/{host}", Role::viewer, Operation::get_domain},
    Route{Method::put, "PUT", "/api/v1/domains/{host}", Role::admin, Operation::put_domain},
    Route{Method::del, "DELETE", "/api/v1/domains/{host}", Role::admin, Operation::delete_domain},
};

// A domain by its host, which the middleware checked is a lower-case DNS name.
class Domains final : public Resource {
  public:
    explicit Domains(AdminStore& store) : store_(store) {}

    void serve(const ApiRequest& r, Answer& answer) override {
        switch (r.route->operation) {
            case Operation::list_domains:
                return answer.outcome(store_.list_domains());
            case Operation::get_domain:
                return answer.outcome(store_.get_domain(r.name));
            case Operation::delete_domain:
                return answer.outcome(store_.delete_domain(r.actor, r.name, r.if_match));
            default: {
                auto o = store_.put_domain(r.actor, r.name, r.put,
                                           codec::parse_domain_put(r.name, r.body));
                answer.outcome(o, o.kind == OutcomeKind::created ? "/api/v1/domains/" + r.name
                                                                 : std::string());
            }
        }
    }

  private:
    AdminStore& store_;
};

}  // namespace

std::span<const Route> domain_routes() { return kDomainRoutes; }

std::unique_ptr<Resource> domains_resource(AdminStore& store) {
    return std::make_unique<Domains>(store);
}

}  // namespace refgate::admin
