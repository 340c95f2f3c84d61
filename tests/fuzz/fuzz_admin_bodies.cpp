// The admin API's JSON bodies through the admin service itself (src/admin, over the rows kept in
// memory that its unit tests use), each read into its command as the HTTP layer reads it:
// partner create and PATCH (a code schedule too), link create, PATCH and preview, disclosure PUT
// and preview, token create. The first byte picks the call, the rest is the request body,
// refused as the middleware refuses it (not JSON: 400; not an object: 422). Invariants: nothing
// throws (an exception would be a 500); a refusal is a 4xx outcome with a reason (every 422
// names its fields); what a call accepted reads back with GET, and that object, sent back as the
// body of a PATCH or PUT, is accepted and changes nothing: what is stored re-serialises and
// re-parses to the same value.

#include <chrono>

#include "../unit/admin/fake_admin_rows.hpp"
#include "fuzz_check.hpp"
#include "refgate/admin/admin_json.hpp"
#include "refgate/admin/admin_service.hpp"
#include "refgate/codec/import_document.hpp"
#include "refgate/codec/stored_objects.hpp"

namespace {

using namespace refgate::admin;
using Json = nlohmann::ordered_json;
using refgate::codec::parse_link_patch;
using refgate::codec::parse_link_preview;
using refgate::codec::parse_new_link;
using refgate::codec::parse_new_partner;
using refgate::codec::parse_partner_patch;

struct FixedClock final : refgate::domain::Clock {
    std::chrono::system_clock::time_point now() const override {
        return std::chrono::sys_days{std::chrono::year{2027} / 1 / 15};
    }
};

const Actor kEditor{"eddie", Role::editor};
const Actor kAdmin{"ada", Role::admin};

struct World {
    FixedClock clock;
    AdminService service;
    World()
        : service(std::make_unique<testing::FakeRepository>(),
                  {.clock = &clock, .public_base_url = "https://picks.example.com"}) {
        auto partner = Json::parse(R"({"slug": "tailscale", "name": "Tailscale",
            "ref_param": "ref", "ref_code": "picks42", "allowed_domains": ["tailscale.com"]})");
        FUZZ_CHECK(
            service.create_partner(kEditor, refgate::codec::parse_new_partner(partner)).kind ==
            OutcomeKind::created);
        Json link{
            {"slug", "demo"}, {"partner", "tailscale"}, {"destination", "https://tailscale.com/"}};
        FUZZ_CHECK(service.create_link(kEditor, refgate::codec::parse_new_link(link)).kind ==
                   OutcomeKind::created);
    }
};

template <typename Answer>
void check_refusal(const Answer& o) {
    switch (o.kind) {
        case OutcomeKind::invalid:
            FUZZ_CHECK(!o.errors.empty());
            for (const auto& e : o.errors) FUZZ_CHECK(!e.message.empty());
            break;
        case OutcomeKind::not_found:
        case OutcomeKind::conflict:
        case OutcomeKind::stale:
        case OutcomeKind::precondition_required:
        case OutcomeKind::bad_request:
            FUZZ_CHECK(!o.detail.empty());
            break;
        default:
            break;
    }
}

template <typename Answer>
bool accepted(const Answer& o) {
    return o.kind == OutcomeKind::ok || o.kind == OutcomeKind::created;
}

// The object an answer shows, as the API writes it.
template <typename View>
Json shown(const Result<View>& r) {
    using refgate::codec::view_json;
    return view_json(r.view);
}

// The object GET answers, written out and read back as a client would.
template <typename Answer>
Json read_back(const Answer& got) {
    Json body = shown(got);
    FUZZ_CHECK(got.kind == OutcomeKind::ok && body.is_object());
    Json again = Json::parse(body.dump(), nullptr, false);
    FUZZ_CHECK(again == body);
    return again;
}

// GET, then the object back as a PATCH: accepted, and nothing changes (not even the version).
template <typename Get, typename Patch>
void check_round_trip(Get get, Patch patch) {
    Json before = read_back(get());
    auto o = patch(writable(before));
    for (const auto& e : o.errors)
        std::fprintf(stderr, "%s: %s\n", e.field.c_str(), e.message.c_str());
    FUZZ_CHECK(o.kind == OutcomeKind::ok);
    FUZZ_CHECK(read_back(get()) == before);
}

void run(World& w, std::uint8_t op, const Json& body) {
    auto& s = w.service;
    const Precondition any{.any = true};
    // What the call answered: its kind, and the object when it was accepted.
    OutcomeKind kind = OutcomeKind::ok;
    Json object;
    auto check = [&](const auto& o) {
        check_refusal(o);
        kind = o.kind;
        if (accepted(o)) object = shown(o);
    };
    switch (op % 8) {
        case 0:
            check(s.create_partner(kEditor, parse_new_partner(body)));
            break;
        case 1:
            check(s.update_partner(kEditor, "tailscale", any, parse_partner_patch(body)));
            break;
        case 2:
            check(s.create_link(kEditor, parse_new_link(body)));
            break;
        case 3:
            check(s.update_link(kEditor, "demo", any, parse_link_patch(body)));
            break;
        case 4:
            check(s.preview_link(parse_link_preview(body)));
            break;
        case 5:
            check(s.put_disclosure(kEditor, "general", "en", {},
                                   refgate::codec::parse_disclosure_put("general", "en", body)));
            break;
        case 6:
            check(s.preview_disclosure(refgate::codec::parse_disclosure_preview(body)));
            break;
        default:
            check(s.create_token(kAdmin, parse_new_token(body)));
            break;
    }
    if (kind != OutcomeKind::ok && kind != OutcomeKind::created) return;
    std::string partner = op % 8 == 0 ? object.value("slug", "") : "tailscale";
    std::string link = op % 8 == 2 ? object.value("slug", "") : "demo";
    if (op % 8 <= 1) {
        check_round_trip([&] { return s.get_partner(partner); },
                         [&](const Json& p) {
                             return s.update_partner(kEditor, partner, any, parse_partner_patch(p));
                         });
    } else if (op % 8 <= 3) {
        check_round_trip(
            [&] { return s.get_link(link); },
            [&](const Json& p) { return s.update_link(kEditor, link, any, parse_link_patch(p)); });
    } else if (op % 8 == 5) {
        Json before = read_back(s.get_disclosure("general", "en"));
        auto again = s.put_disclosure(
            kEditor, "general", "en", {.if_match = any},
            refgate::codec::parse_disclosure_put("general", "en", writable(before)));
        FUZZ_CHECK(again.kind == OutcomeKind::ok);
        FUZZ_CHECK(read_back(s.get_disclosure("general", "en")).value("text", Json()) ==
                   before.value("text", Json()));
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 1) return 0;
    Json body = Json::parse(refgate::fuzz::as_text(data + 1, size - 1), nullptr, false);
    if (body.is_discarded() || !body.is_object()) return 0;  // 400 and 422 in the middleware
    // A fresh world per input keeps inputs independent (the rows are a few maps).
    World w;
    run(w, data[0], body);
    return 0;
}
