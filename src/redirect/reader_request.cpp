#include "refgate/redirect/reader_request.hpp"

namespace refgate::redirect {
namespace {

std::string_view* slot_of(ReaderRequest& out, std::string_view name) {
    switch (name.size()) {
        case 3:
            if (http::iequals(name, "DNT")) return &out.dnt;
            break;
        case 5:
            if (http::iequals(name, "X-Moz")) return &out.x_moz;
            break;
        case 7:
            if (http::iequals(name, "Purpose")) return &out.purpose;
            if (http::iequals(name, "Sec-GPC")) return &out.sec_gpc;
            break;
        case 9:
            if (http::iequals(name, "X-Purpose")) return &out.x_purpose;
            break;
        case 10:
            if (http::iequals(name, "User-Agent")) return &out.user_agent;
            break;
        case 11:
            if (http::iequals(name, "Sec-Purpose")) return &out.sec_purpose;
            break;
        case 15:
            if (http::iequals(name, "X-Forwarded-For")) return &out.forwarded_for;
            if (http::iequals(name, "Accept-Language")) return &out.accept_language;
            break;
        default:
            break;
    }
    return nullptr;
}

}  // namespace

ReaderRequest ReaderRequest::of(const http::Request& request,
                                const std::vector<domain::IpNetwork>& trusted_proxies) {
    ReaderRequest out;
    if (request.fields != nullptr) {
        for (const auto& field : *request.fields) {
            std::string_view* slot = slot_of(out, field.name);
            if (slot != nullptr && slot->data() == nullptr) *slot = field.value;
        }
    }
    out.address = domain::client_address(request.peer.bytes, out.forwarded_for, trusted_proxies);
    return out;
}

std::uint64_t ReaderRequest::hash(const clicks::SaltKey& salt, std::int64_t link_id) {
    if (!salted_hash.known || salted_hash.link_id != link_id || salted_hash.salt != salt) {
        salted_hash = {salt, link_id, clicks::unique_hash(salt, address, user_agent, link_id),
                       true};
    }
    return salted_hash.value;
}

}  // namespace refgate::redirect
