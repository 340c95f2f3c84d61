#include "refgate/codec/import_document.hpp"

#include <algorithm>
#include <set>

#include "refgate/codec/disclosure_json.hpp"
#include "refgate/codec/domains_json.hpp"
#include "refgate/domain/html.hpp"
#include "refgate/domain/link_rules.hpp"
#include "refgate/domain/placement.hpp"
#include "refgate/domain/targeting.hpp"
#include "targeting_json.hpp"

namespace refgate::codec {
namespace {

constexpr std::size_t kMaxName = 200;
constexpr std::size_t kMaxCode = 128;
constexpr std::size_t kMaxParamValue = 256;
constexpr std::size_t kMaxDomains = 64;
constexpr std::size_t kMaxChannelCodes = 64;

bool printable(const std::string& text) {
    for (unsigned char c : text) {
        if (c < 0x20 || c == 0x7f) return false;
    }
    return true;
}

class Reader {
  public:
    Reader(std::vector<ImportIssue>& issues, std::string entry,
           const nlohmann::ordered_json& object)
        : issues_(issues), entry_(std::move(entry)), object_(object) {}

    void add(const std::string& field, const std::string& message) {
        issues_.push_back({entry_, field, message});
    }

    void reject_unknown(const std::vector<const char*>& known) {
        for (const auto& [key, value] : object_.items()) {
            bool ok = false;
            for (const char* k : known) ok = ok || key == k;
            if (!ok) add(key, "is not a known field");
        }
    }

    // Reads a required (or, with fallback, optional) string field.
    bool string(const char* field, std::string& out, bool required = true) {
        auto it = object_.find(field);
        if (it == object_.end() || it->is_null()) {
            if (required) add(field, "is required");
            return false;
        }
        if (!it->is_string()) {
            add(field, "must be a string");
            return false;
        }
        out = it->get<std::string>();
        return true;
    }

    void boolean(const char* field, bool& out) {
        auto it = object_.find(field);
        if (it == object_.end()) return;
        if (!it->is_boolean()) {
            add(field, "must be true or false");
            return;
        }
        out = it->get<bool>();
    }

    const nlohmann::ordered_json* find(const char* field) const {
        auto it = object_.find(field);
        return it == object_.end() ? nullptr : &*it;
    }

  private:
    std::vector<ImportIssue>& issues_;
    std::string entry_;
    const nlohmann::ordered_json& object_;
};

std::string entry_name(const char* array, std::size_t index, const nlohmann::ordered_json& item) {
    std::string name = std::string(array) + "[" + std::to_string(index) + "]";
    if (item.is_object() && item.contains("slug") && item["slug"].is_string()) {
        name += " (" + item["slug"].get<std::string>() + ")";
    }
    return name;
}

using Json = nlohmann::ordered_json;

// A partner's extra parameters in order; a value that is not a string is none.
using ParamList = std::vector<std::pair<std::string, std::optional<std::string>>>;

// The extra parameters' rules, which need the referral parameter: the import's and a patch's.
void check_extra_params(const ParamList& extras, const std::string& ref_param, const IssueSink& add,
                        domain::Partner& p) {
    for (const auto& [key, value] : extras) {
        if (!domain::valid_param_name(key)) {
            add("extra_params", "has an invalid parameter name '" + key + "'");
        } else if (key == ref_param) {
            add("extra_params", "must not set the referral parameter '" + key + "'");
        } else if (!value || value->size() > kMaxParamValue || !printable(*value)) {
            add("extra_params",
                "value of '" + key + "' must be a string of up to 256 printable characters");
        } else {
            p.extra_params.emplace_back(key, *value);
        }
    }
}

std::optional<std::string> string_value(const Json& value) {
    if (!value.is_string()) return std::nullopt;
    return value.get<std::string>();
}

// A partner's channel_codes: a list of {channel, ref_code}, each channel once.
void read_channel_codes(Reader& r, domain::Partner& p) {
    const Json* codes = r.find("channel_codes");
    if (codes == nullptr || codes->is_null()) return;
    if (!codes->is_array() || codes->size() > kMaxChannelCodes) {
        r.add("channel_codes", "must be a list of at most 64 {channel, ref_code} objects");
        return;
    }
    for (std::size_t i = 0; i < codes->size(); ++i) {
        const auto& item = (*codes)[i];
        std::string field = "channel_codes[" + std::to_string(i) + "]";
        if (!item.is_object() || item.size() != 2 || !item.contains("channel") ||
            !item.contains("ref_code")) {
            r.add(field, "must be an object {\"channel\": ..., \"ref_code\": ...}");
            continue;
        }
        const auto& channel = item["channel"];
        const auto& code = item["ref_code"];
        bool ok = true;
        if (!channel.is_string() || !domain::valid_channel_pattern(channel.get<std::string>())) {
            r.add(field + ".channel",
                  "must be a channel ([a-z0-9][a-z0-9._-]{0,47}) or a prefix of one followed by *");
            ok = false;
        }
        if (!code.is_string() || code.get<std::string>().empty() ||
            code.get<std::string>().size() > kMaxCode || !printable(code.get<std::string>())) {
            r.add(field + ".ref_code", "must be 1 to 128 printable characters");
            ok = false;
        }
        if (!ok) continue;
        domain::ChannelCode entry{channel.get<std::string>(), code.get<std::string>()};
        for (const auto& earlier : p.channel_codes) {
            if (earlier.channel == entry.channel) {
                r.add(field + ".channel", "appears twice");
                ok = false;
            }
        }
        if (ok) p.channel_codes.push_back(std::move(entry));
    }
}

// One field of a partner or a link: how the import reads it from an object (by its rules), and
// how a patch carries it onto a stored value. A new field is an entry of its table.
template <typename T>
struct FieldRule {
    std::string_view name;
    void (*read)(Reader&, T&);
    void (*copy)(const T& from, T& to);
};

// In the order the import reports them.
const FieldRule<domain::Partner> kPartnerFields[] = {
    {"slug",
     [](Reader& r, domain::Partner& p) {
         if (r.string("slug", p.slug) && !domain::valid_slug(p.slug))
             r.add("slug", "must match [a-z0-9][a-z0-9-]{0,63}");
     },
     [](const domain::Partner& f, domain::Partner& t) { t.slug = f.slug; }},
    {"name",
     [](Reader& r, domain::Partner& p) {
         if (r.string("name", p.name) &&
             (p.name.empty() || p.name.size() > kMaxName || !printable(p.name))) {
             r.add("name", "must be 1 to 200 printable characters");
         }
     },
     [](const domain::Partner& f, domain::Partner& t) { t.name = f.name; }},
    {"ref_param",
     [](Reader& r, domain::Partner& p) {
         if (r.string("ref_param", p.ref_param) && !domain::valid_param_name(p.ref_param))
             r.add("ref_param", "must be 1 to 64 of A-Z a-z 0-9 _ . -");
     },
     [](const domain::Partner& f, domain::Partner& t) { t.ref_param = f.ref_param; }},
    {"ref_code",
     [](Reader& r, domain::Partner& p) {
         if (r.string("ref_code", p.ref_code) &&
             (p.ref_code.empty() || p.ref_code.size() > kMaxCode || !printable(p.ref_code))) {
             r.add("ref_code", "must be 1 to 128 printable characters");
         }
     },
     [](const domain::Partner& f, domain::Partner& t) { t.ref_code = f.ref_code; }},
    {"allowed_domains",
     [](Reader& r, domain::Partner& p) {
         const Json* domains = r.find("allowed_domains");
         if (domains == nullptr || !domains->is_array() || domains->empty() ||
             domains->size() > kMaxDomains) {
             r.add("allowed_domains", "must be a list of 1 to 64 domain names");
             return;
         }
         for (const auto& d : *domains) {
             std::string canonical =
                 d.is_string() ? domain::canonical_domain(d.get<std::string>()) : "";
             if (canonical.empty()) {
                 r.add("allowed_domains", "has an invalid domain name " + d.dump());
             } else {
                 p.allowed_domains.push_back(canonical);
             }
         }
     },
     [](const domain::Partner& f, domain::Partner& t) { t.allowed_domains = f.allowed_domains; }},
    {"extra_params",
     [](Reader& r, domain::Partner& p) {
         const Json* extras = r.find("extra_params");
         if (extras == nullptr || extras->is_null()) return;
         if (!extras->is_object()) {
             r.add("extra_params", "must be an object of parameter names to string values");
             return;
         }
         ParamList list;
         for (const auto& [key, value] : extras->items())
             list.emplace_back(key, string_value(value));
         check_extra_params(
             list, p.ref_param, [&](const std::string& f, const std::string& m) { r.add(f, m); },
             p);
     },
     [](const domain::Partner& f, domain::Partner& t) { t.extra_params = f.extra_params; }},
    {"active", [](Reader& r, domain::Partner& p) { r.boolean("active", p.active); },
     [](const domain::Partner& f, domain::Partner& t) { t.active = f.active; }},
    // Placements (issue 42); absent or null: none, opaque, "a-z0-9", none. The sub-ID
    // parameter is checked against the referral and extra parameters once all are known
    // (subid_param_problem, in read_partner and apply_patch).
    {"subid_param",
     [](Reader& r, domain::Partner& p) { r.string("subid_param", p.subid_param, false); },
     [](const domain::Partner& f, domain::Partner& t) { t.subid_param = f.subid_param; }},
    {"subid_style",
     [](Reader& r, domain::Partner& p) {
         std::string style;
         if (!r.string("subid_style", style, false)) return;
         if (style == "readable") {
             p.subid_style = domain::SubidStyle::readable;
         } else if (style == "opaque") {
             p.subid_style = domain::SubidStyle::opaque;
         } else {
             r.add("subid_style", "must be opaque or readable");
         }
     },
     [](const domain::Partner& f, domain::Partner& t) { t.subid_style = f.subid_style; }},
    {"subid_charset",
     [](Reader& r, domain::Partner& p) {
         if (r.string("subid_charset", p.subid_charset, false) &&
             !domain::SubidCharset::parse(p.subid_charset))
             r.add("subid_charset",
                   "must be ranges such as a-z, A-Z, 0-9 and the characters - _ . (at most 64)");
     },
     [](const domain::Partner& f, domain::Partner& t) { t.subid_charset = f.subid_charset; }},
    {"channel_codes", [](Reader& r, domain::Partner& p) { read_channel_codes(r, p); },
     [](const domain::Partner& f, domain::Partner& t) { t.channel_codes = f.channel_codes; }},
};

const FieldRule<domain::Link> kLinkFields[] = {
    {"slug",
     [](Reader& r, domain::Link& l) {
         if (r.string("slug", l.slug) && !domain::valid_slug(l.slug))
             r.add("slug", "must match [a-z0-9][a-z0-9-]{0,63}");
     },
     [](const domain::Link& f, domain::Link& t) { t.slug = f.slug; }},
    {"partner",
     [](Reader& r, domain::Link& l) {
         if (r.string("partner", l.partner) && !domain::valid_slug(l.partner))
             r.add("partner", "is not a valid partner slug");
     },
     [](const domain::Link& f, domain::Link& t) { t.partner = f.partner; }},
    {"destination", [](Reader& r, domain::Link& l) { r.string("destination", l.destination); },
     [](const domain::Link& f, domain::Link& t) { t.destination = f.destination; }},
    {"status",
     [](Reader& r, domain::Link& l) {
         std::string status = "active";
         r.string("status", status, false);
         if (auto parsed = domain::parse_link_status(status)) {
             l.status = *parsed;
         } else {
             r.add("status", "must be active or disabled");
         }
     },
     [](const domain::Link& f, domain::Link& t) { t.status = f.status; }},
    {"expires_at",
     [](Reader& r, domain::Link& l) {
         std::string expires;
         if (r.string("expires_at", expires, false)) {
             l.expires_at = domain::parse_rfc3339(expires);
             if (!l.expires_at)
                 r.add("expires_at",
                       "must be an RFC 3339 time such as 2026-12-31T23:59:59Z, or null");
         }
     },
     [](const domain::Link& f, domain::Link& t) { t.expires_at = f.expires_at; }},
    {"fallback",
     [](Reader& r, domain::Link& l) {
         std::string fallback;
         if (r.string("fallback", fallback, false)) l.fallback = fallback;
     },
     [](const domain::Link& f, domain::Link& t) { t.fallback = f.fallback; }},
    {"utm_passthrough",
     [](Reader& r, domain::Link& l) { r.boolean("utm_passthrough", l.utm_passthrough); },
     [](const domain::Link& f, domain::Link& t) { t.utm_passthrough = f.utm_passthrough; }},
    {"auto_fallback",
     [](Reader& r, domain::Link& l) { r.boolean("auto_fallback", l.auto_fallback); },
     [](const domain::Link& f, domain::Link& t) { t.auto_fallback = f.auto_fallback; }},
    {"max_human_clicks",
     [](Reader& r, domain::Link& l) {
         const auto* cap = r.find("max_human_clicks");
         if (cap == nullptr || cap->is_null()) return;
         // Parsed text holds a positive integer as unsigned, a built document as signed.
         if (cap->is_number_integer() && cap->get<std::int64_t>() >= 1 &&
             cap->get<std::int64_t>() <= domain::kMaxHumanClicksCap) {
             l.max_human_clicks = cap->get<std::int64_t>();
         } else {
             r.add("max_human_clicks", "must be a positive integer, or null");
         }
     },
     [](const domain::Link& f, domain::Link& t) { t.max_human_clicks = f.max_human_clicks; }},
    {"rules",
     [](Reader& r, domain::Link& l) {
         if (const auto* rules = r.find("rules"); rules != nullptr && !rules->is_null())
             read_rules(*rules, l.rules,
                        [&](const std::string& f, const std::string& m) { r.add(f, m); });
     },
     [](const domain::Link& f, domain::Link& t) { t.rules = f.rules; }},
    {"domain",
     [](Reader& r, domain::Link& l) {
         std::string host;
         if (r.string("domain", host, false)) {
             l.domain = canonical_domain_host(host);
             if (l.domain.empty()) r.add("domain", "must be a domain's host, or null");
         }
     },
     [](const domain::Link& f, domain::Link& t) { t.domain = f.domain; }},
};

template <typename T, std::size_t N>
void read_fields(Reader& r, const FieldRule<T> (&fields)[N], T& out) {
    std::vector<const char*> known;
    for (const auto& field : fields) known.push_back(field.name.data());
    r.reject_unknown(known);
    for (const auto& field : fields) field.read(r, out);
}

domain::Partner read_partner(Reader& r) {
    domain::Partner p;
    read_fields(r, kPartnerFields, p);
    if (auto problem = p.subid_param.empty() ? std::nullopt : domain::subid_param_problem(p))
        r.add("subid_param", *problem);
    return p;
}

domain::Link read_link(Reader& r) {
    domain::Link l;
    read_fields(r, kLinkFields, l);
    return l;
}

template <typename T, std::size_t N>
const FieldRule<T>* field_named(const FieldRule<T> (&fields)[N], std::string_view name) {
    for (const auto& field : fields) {
        if (field.name == name) return &field;
    }
    return nullptr;
}

// Where a field's problems come in the import's report: unknown fields first, then by field.
template <typename T, std::size_t N>
int report_rank(const FieldRule<T> (&fields)[N], std::string_view name) {
    const FieldRule<T>* field = field_named(fields, name);
    return field == nullptr ? -1 : static_cast<int>(field - fields);
}

void add_errors(std::vector<FieldError>& errors, const std::vector<ImportIssue>& issues) {
    for (const auto& issue : issues) errors.push_back({issue.field, issue.message});
}

// A merge patch's member read as the import reads that field of a whole object: a null as if
// the member were absent (RFC 7396 removes it), so a required field "is required" and another
// takes its default.
template <typename T>
void read_member(const FieldRule<T>& field, const Json& value, T& out,
                 std::vector<FieldError>& errors) {
    Json object = Json::object();
    if (!value.is_null()) object[std::string(field.name)] = value;
    std::vector<ImportIssue> issues;
    Reader r(issues, "", object);
    field.read(r, out);
    add_errors(errors, issues);
}

// The members of a patch that no field of the object has; a null one removes nothing.
template <typename T, std::size_t N>
void reject_unknown_members(const Json& patch, const FieldRule<T> (&fields)[N],
                            std::vector<FieldError>& errors) {
    for (const auto& [key, value] : patch.items()) {
        if (!value.is_null() && field_named(fields, key) == nullptr)
            errors.push_back({key, "is not a known field"});
    }
}

// The patch's fields as the import reads them, in the import's order. The slug cannot change:
// it is only kept (one that is not a string, or null, is none, never the stored one).
// `special` reads a member its own way (true) or leaves it to its field (false).
template <typename T, typename Patch, std::size_t N>
void read_patch_fields(const Json& patch, const FieldRule<T> (&fields)[N], Patch& out,
                       const std::function<bool(std::string_view, const Json&)>& special) {
    reject_unknown_members(patch, fields, out.errors);
    for (const auto& field : fields) {
        auto it = patch.find(std::string(field.name));
        if (it == patch.end()) continue;
        if (field.name == "slug") {
            out.given.emplace_back(field.name);
            out.fields.slug = it->is_string() ? it->template get<std::string>() : std::string();
            continue;
        }
        if (special && special(field.name, *it)) continue;
        out.given.emplace_back(field.name);
        read_member(field, *it, out.fields, out.errors);
    }
}

// PATCH {"ref_code", "valid_from"}, {"channel_codes", "valid_from"} or all three, and nothing
// else.
CodeSchedule read_schedule(const Json& patch, std::vector<FieldError>& errors) {
    for (const auto& [key, value] : patch.items()) {
        if (key != "ref_code" && key != "valid_from" && key != "channel_codes")
            errors.push_back({key, "cannot be changed together with valid_from"});
    }
    CodeSchedule schedule;
    const Json& when = patch.at("valid_from");
    std::optional<domain::SysSeconds> valid_from;
    if (when.is_string()) valid_from = domain::parse_rfc3339(when.get<std::string>());
    if (valid_from) {
        schedule.valid_from = *valid_from;
    } else {
        errors.push_back({"valid_from", "must be an RFC 3339 time, e.g. 2026-12-01T00:00:00Z"});
    }
    if (auto codes = patch.find("channel_codes"); codes != patch.end()) {
        if (codes->is_null()) {
            errors.push_back({"channel_codes", "must be a list with valid_from ([] clears them)"});
        } else {
            domain::Partner p;
            read_member(*field_named(kPartnerFields, "channel_codes"), *codes, p, errors);
            schedule.channel_codes = std::move(p.channel_codes);
        }
    }
    auto code = patch.find("ref_code");
    if (code == patch.end()) {
        if (!schedule.channel_codes)
            errors.push_back({"ref_code", "is required with valid_from (null cancels)"});
    } else if (!code->is_null()) {
        domain::Partner p;
        read_member(*field_named(kPartnerFields, "ref_code"), *code, p, errors);
        schedule.ref_code = p.ref_code;
    } else if (schedule.channel_codes) {
        errors.push_back(
            {"ref_code", "null cancels the switch at valid_from: give no channel_codes"});
    }
    return schedule;
}

bool names(const std::vector<std::string>& given, std::string_view field) {
    for (const auto& g : given) {
        if (g == field) return true;
    }
    return false;
}

// A preview's "reader": {"country", "platform", "language"}, each optional.
std::optional<PreviewReader> read_reader(const Json& reader, std::vector<FieldError>& errors) {
    PreviewReader traits;
    if (!reader.is_object()) {
        errors.push_back({"reader", "must be an object with country, platform and language"});
        return std::nullopt;
    }
    for (const auto& [key, value] : reader.items()) {
        std::string text = value.is_string() ? value.get<std::string>() : std::string();
        if (key == "country" && domain::country_code(text) != 0) {
            traits.country = domain::country_code(text);
        } else if (key == "platform" && domain::parse_platform(text)) {
            traits.platform = *domain::parse_platform(text);
        } else if (key == "language" && domain::valid_language_tag(text)) {
            traits.language = text;
        } else {
            errors.push_back({"reader." + key, "is not a country code, platform or language tag"});
        }
    }
    if (!errors.empty()) return std::nullopt;
    return traits;
}

domain::Disclosure read_disclosure(Reader& r) {
    domain::Disclosure d;
    r.reject_unknown({"key", "locale", "text", "html"});
    if (r.string("key", d.key) && !domain::valid_slug(d.key))
        r.add("key", "must be general or a partner slug ([a-z0-9][a-z0-9-]{0,63})");
    std::string locale;
    if (r.string("locale", locale)) {
        auto normalized = domain::normalize_locale(locale);
        if (normalized) {
            d.locale = *normalized;
        } else {
            r.add("locale", "must be a language tag such as en, de or de-AT");
        }
    }
    if (r.string("text", d.text) && !domain::valid_disclosure_text(d.text))
        r.add("text", "must be 1 to 2000 bytes of text without control characters");
    std::string html;
    if (r.string("html", html, false)) {
        if (html.size() > domain::kMaxDisclosureHtml) {
            r.add("html", "must be at most 8000 bytes");
        } else {
            d.html = domain::sanitize_html(html);
            d.html_given = true;
        }
    }
    if (!d.html_given) d.html = domain::text_to_html(d.text);
    return d;
}

}  // namespace

std::string ImportIssue::to_string() const { return entry + ": " + field + " " + message; }

namespace {

// doc[key], a list of objects, each read by `read` into `out`; `name_of` names an entry in
// issues, and an entry whose non-empty `identity` an earlier one has gets `twice` at `field`.
template <typename T, typename Name, typename Read, typename Identity>
void read_entries(const nlohmann::ordered_json& doc, const char* key,
                  std::vector<ImportIssue>& issues, std::vector<T>& out, Name&& name_of,
                  Read&& read, Identity&& identity, const std::string& field,
                  const std::string& twice) {
    auto it = doc.find(key);
    if (it == doc.end()) return;
    if (!it->is_array()) {
        issues.push_back({"document", key, "must be a list"});
        return;
    }
    std::set<std::string> seen;
    for (std::size_t i = 0; i < it->size(); ++i) {
        const auto& item = (*it)[i];
        std::string name = name_of(i, item);
        if (!item.is_object()) {
            issues.push_back({name, "", "must be an object"});
            continue;
        }
        Reader r(issues, name, item);
        T entry = read(r);
        if (std::string id = identity(entry); !id.empty() && !seen.insert(id).second)
            r.add(field, twice);
        out.push_back(std::move(entry));
    }
}

// "disclosures[i] (key/locale)" when the entry names both.
std::string disclosure_entry_name(std::size_t i, const nlohmann::ordered_json& item) {
    std::string name = "disclosures[" + std::to_string(i) + "]";
    if (item.is_object() && item.contains("key") && item["key"].is_string() &&
        item.contains("locale") && item["locale"].is_string()) {
        name +=
            " (" + item["key"].get<std::string>() + "/" + item["locale"].get<std::string>() + ")";
    }
    return name;
}

}  // namespace

ParsedImport parse_import(const nlohmann::ordered_json& doc) {
    ParsedImport result;
    auto& issues = result.issues;
    if (!doc.is_object()) {
        issues.push_back({"document", "", "must be a JSON object with \"partners\" and \"links\""});
        return result;
    }
    for (const auto& [key, value] : doc.items()) {
        if (key != "partners" && key != "links" && key != "disclosures" &&
            key != "country_groups" && key != "domains")
            issues.push_back({"document", key, "is not a known field"});
    }
    auto& document = result.document;
    read_entries(
        doc, "partners", issues, document.partners,
        [](std::size_t i, const auto& item) { return entry_name("partners", i, item); },
        read_partner, [](const domain::Partner& p) { return p.slug; }, "slug", "appears twice");
    read_entries(
        doc, "links", issues, document.links,
        [](std::size_t i, const auto& item) { return entry_name("links", i, item); }, read_link,
        [](const domain::Link& l) { return l.slug.empty() ? std::string() : domain::link_key(l); },
        "slug", "appears twice");
    read_entries(
        doc, "disclosures", issues, document.disclosures, disclosure_entry_name, read_disclosure,
        [](const domain::Disclosure& d) {
            return d.key.empty() || d.locale.empty() ? std::string() : d.key + "/" + d.locale;
        },
        "locale", "appears twice for this key");
    if (auto it = doc.find("country_groups"); it != doc.end())
        read_country_groups(*it, document.country_groups, issues);
    if (auto it = doc.find("domains"); it != doc.end()) read_domains(*it, document.domains, issues);
    return result;
}

std::vector<ImportIssue> validate_links(std::vector<domain::Link>& links,
                                        const PartnerLookup& partners,
                                        const domain::UrlPolicy& policy, const std::string& what) {
    std::vector<ImportIssue> issues;
    for (std::size_t i = 0; i < links.size(); ++i) {
        domain::Link& link = links[i];
        // A missing partner or a bad slug was already reported by parse_import.
        if (link.partner.empty() || !domain::valid_slug(link.slug)) continue;
        std::string entry = what + "[" + std::to_string(i) + "] (" + link.slug + ")";
        const domain::Partner* partner = partners(link.partner);
        if (partner == nullptr) {
            issues.push_back({entry, "partner", "'" + link.partner + "' does not exist"});
            continue;
        }
        // The snapshot builder's own rules: a link saved here is a link served.
        domain::LinkValidation checked = domain::validate_link(link, *partner, policy);
        for (auto& issue : checked.issues)
            issues.push_back({entry, issue.field, issue.message + " [" + issue.rule + "]"});
        if (checked.destination) link.destination = std::move(*checked.destination);
        if (checked.fallback) link.fallback = std::move(*checked.fallback);
        for (auto& issue : domain::validate_rules(link.rules, *partner, partners, policy))
            issues.push_back({entry, issue.field, issue.message + " [" + issue.rule + "]"});
    }
    return issues;
}

nlohmann::ordered_json export_document(const std::vector<domain::Partner>& partners,
                                       const std::vector<domain::Link>& links,
                                       const std::vector<domain::Disclosure>& disclosures,
                                       const std::vector<domain::CountryGroup>& country_groups,
                                       const std::vector<domain::Domain>& domains) {
    nlohmann::ordered_json doc;
    if (!domains.empty()) {
        doc["domains"] = nlohmann::ordered_json::array();
        for (const auto& d : domains) doc["domains"].push_back(domain_to_json(d));
    }
    doc["partners"] = nlohmann::ordered_json::array();
    for (const auto& p : partners) doc["partners"].push_back(partner_to_json(p));
    doc["links"] = nlohmann::ordered_json::array();
    for (const auto& l : links) doc["links"].push_back(link_to_json(l));
    if (!disclosures.empty()) {
        doc["disclosures"] = nlohmann::ordered_json::array();
        for (const auto& d : disclosures) doc["disclosures"].push_back(disclosure_to_json(d));
    }
    if (!country_groups.empty()) {
        doc["country_groups"] = nlohmann::ordered_json::array();
        for (const auto& g : country_groups)
            doc["country_groups"].push_back(country_group_to_json(g));
    }
    return doc;
}

nlohmann::ordered_json partner_to_json(const domain::Partner& partner) {
    nlohmann::ordered_json extras = nlohmann::ordered_json::object();
    for (const auto& [key, value] : partner.extra_params) extras[key] = value;
    nlohmann::ordered_json channel_codes = nlohmann::ordered_json::array();
    for (const auto& c : partner.channel_codes)
        channel_codes.push_back({{"channel", c.channel}, {"ref_code", c.ref_code}});
    return {
        {"slug", partner.slug},
        {"name", partner.name},
        {"ref_param", partner.ref_param},
        {"ref_code", partner.ref_code},
        {"allowed_domains", partner.allowed_domains},
        {"extra_params", extras},
        {"active", partner.active},
        {"subid_param", partner.subid_param.empty() ? nlohmann::ordered_json()
                                                    : nlohmann::ordered_json(partner.subid_param)},
        {"subid_style",
         partner.subid_style == domain::SubidStyle::readable ? "readable" : "opaque"},
        {"subid_charset", partner.subid_charset},
        {"channel_codes", channel_codes}};
}

domain::Partner partner_from_json(const nlohmann::ordered_json& j) {
    domain::Partner p;
    p.slug = j.at("slug").get<std::string>();
    p.name = j.at("name").get<std::string>();
    p.ref_param = j.at("ref_param").get<std::string>();
    p.ref_code = j.at("ref_code").get<std::string>();
    p.allowed_domains = j.at("allowed_domains").get<std::vector<std::string>>();
    for (const auto& [key, value] : j.at("extra_params").items())
        p.extra_params.emplace_back(key, value.get<std::string>());
    p.active = j.value("active", true);
    if (auto subid = j.find("subid_param"); subid != j.end() && subid->is_string())
        p.subid_param = subid->get<std::string>();
    if (j.value("subid_style", std::string("opaque")) == "readable")
        p.subid_style = domain::SubidStyle::readable;
    p.subid_charset = j.value("subid_charset", p.subid_charset);
    if (auto codes = j.find("channel_codes"); codes != j.end() && codes->is_array()) {
        for (const auto& c : *codes)
            p.channel_codes.push_back(
                {c.at("channel").get<std::string>(), c.at("ref_code").get<std::string>()});
    }
    return p;
}

nlohmann::ordered_json link_to_json(const domain::Link& link) {
    nlohmann::ordered_json j{{"slug", link.slug},
                             {"partner", link.partner},
                             {"destination", link.destination},
                             {"status", to_string(link.status)},
                             {"expires_at", nullptr},
                             {"fallback", nullptr},
                             {"utm_passthrough", link.utm_passthrough},
                             {"auto_fallback", link.auto_fallback}};
    if (link.expires_at) j["expires_at"] = domain::format_rfc3339(*link.expires_at);
    if (link.fallback) j["fallback"] = *link.fallback;
    if (!link.domain.empty()) j["domain"] = link.domain;
    j["max_human_clicks"] = link.max_human_clicks ? Json(*link.max_human_clicks) : Json();
    if (!link.rules.empty()) {
        j["rules"] = nlohmann::ordered_json::array();
        for (const auto& rule : link.rules) j["rules"].push_back(rule_to_json(rule));
    }
    return j;
}

bool PartnerPatch::sets(std::string_view field) const { return names(given, field); }

bool LinkPatch::sets(std::string_view field) const { return names(given, field); }

NewPartner parse_new_partner(const Json& object) {
    ParsedImport parsed = parse_import(Json{{"partners", Json::array({object})}});
    NewPartner out{.partner = std::move(parsed.document.partners.front())};
    add_errors(out.errors, parsed.issues);
    return out;
}

NewLink parse_new_link(const Json& object) {
    ParsedImport parsed = parse_import(Json{{"links", Json::array({object})}});
    NewLink out{.link = std::move(parsed.document.links.front())};
    add_errors(out.errors, parsed.issues);
    return out;
}

PartnerPatch parse_partner_patch(const Json& patch) {
    PartnerPatch out;
    if (patch.contains("scheduled_codes")) {
        out.errors.push_back(
            {"scheduled_codes", "is read-only; schedule a code with ref_code and valid_from"});
        return out;
    }
    if (patch.contains("valid_from")) {
        out.schedule = read_schedule(patch, out.errors);
        return out;
    }
    read_patch_fields(patch, kPartnerFields, out, [&](std::string_view field, const Json& value) {
        if (field != "extra_params" || !value.is_object()) return false;
        // Merged name by name (RFC 7396); checked once merged, against the referral parameter.
        for (const auto& [key, v] : value.items())
            out.extra_params.push_back({key, string_value(v), v.is_null()});
        return true;
    });
    return out;
}

LinkPatch parse_link_patch(const Json& patch) {
    LinkPatch out;
    read_patch_fields(patch, kLinkFields, out, {});
    return out;
}

PatchedPartner apply_patch(const PartnerPatch& patch, domain::Partner stored) {
    for (const auto& field : kPartnerFields) {
        if (patch.sets(field.name)) field.copy(patch.fields, stored);
    }
    ParamList extras;
    for (auto& [key, value] : stored.extra_params) extras.emplace_back(key, std::move(value));
    for (const auto& edit : patch.extra_params) {
        auto it = std::find_if(extras.begin(), extras.end(),
                               [&](const auto& e) { return e.first == edit.name; });
        if (edit.remove) {
            if (it != extras.end()) extras.erase(it);
        } else if (it != extras.end()) {
            it->second = edit.value;
        } else {
            extras.emplace_back(edit.name, edit.value);
        }
    }
    PatchedPartner out{.errors = patch.errors};
    stored.extra_params.clear();
    check_extra_params(
        extras, stored.ref_param,
        [&](const std::string& f, const std::string& m) {
            out.errors.push_back({f, m});
        },
        stored);
    if (auto problem =
            stored.subid_param.empty() ? std::nullopt : domain::subid_param_problem(stored))
        out.errors.push_back({"subid_param", *problem});
    std::stable_sort(
        out.errors.begin(), out.errors.end(), [](const FieldError& a, const FieldError& b) {
            return report_rank(kPartnerFields, a.field) < report_rank(kPartnerFields, b.field);
        });
    out.partner = std::move(stored);
    return out;
}

domain::Link apply_patch(const LinkPatch& patch, domain::Link stored) {
    for (const auto& field : kLinkFields) {
        if (patch.sets(field.name)) field.copy(patch.fields, stored);
    }
    return stored;
}

bool same_fields(const domain::Partner& a, const domain::Partner& b) {
    return partner_to_json(a) == partner_to_json(b);
}

bool same_fields(const domain::Link& a, const domain::Link& b) {
    return link_to_json(a) == link_to_json(b);
}

LinkPreview parse_link_preview(const Json& body) {
    LinkPreview out;
    out.named = body.contains("slug");
    Json input = body;
    if (!out.named) input["slug"] = "preview";  // never shown
    Json reader;
    if (auto it = input.find("reader"); it != input.end()) {
        reader = *it;
        input.erase(it);
    }
    if (!reader.is_null()) out.reader = read_reader(reader, out.errors);
    if (!out.errors.empty()) return out;
    NewLink link = parse_new_link(input);
    out.link = std::move(link.link);
    out.errors = std::move(link.errors);
    return out;
}

CountryGroupPut parse_country_group_put(const std::string& family, const Json& body) {
    CountryGroupPut out;
    Json item = body;
    if (auto it = item.find("family"); it != item.end() && *it != Json(family)) {
        out.errors.push_back({"family", "must be the family the path names"});
        return out;
    }
    item["family"] = family;
    ParsedImport parsed = parse_import(Json{{"country_groups", Json::array({item})}});
    add_errors(out.errors, parsed.issues);
    if (out.errors.empty()) out.group = std::move(parsed.document.country_groups.front());
    return out;
}

DisclosureInput parse_disclosure_put(const std::string& key, const std::string& locale,
                                     const Json& body) {
    DisclosureInput out;
    Json input = body;
    for (const char* read_only : {"version", "updated_at", "updated_by", "html_given"})
        input.erase(read_only);
    if (input.contains("key") && input["key"] != key)
        out.errors.push_back({"key", "must be the key of the URL"});
    if (input.contains("locale") &&
        (!input["locale"].is_string() ||
         domain::normalize_locale(input["locale"].get<std::string>()) != locale))
        out.errors.push_back({"locale", "must be the locale of the URL"});
    if (!out.errors.empty()) return out;
    input["key"] = key;
    input["locale"] = locale;
    ParsedImport parsed = parse_import(Json{{"disclosures", Json::array({input})}});
    add_errors(out.errors, parsed.issues);
    out.disclosure = std::move(parsed.document.disclosures.front());
    return out;
}

DisclosureInput parse_disclosure_preview(const Json& body) {
    DisclosureInput out;
    Json input = body;
    if (!input.contains("key")) input["key"] = std::string(domain::kGeneralDisclosure);
    if (!input.contains("locale")) input["locale"] = "en";
    ParsedImport parsed = parse_import(Json{{"disclosures", Json::array({input})}});
    add_errors(out.errors, parsed.issues);
    out.disclosure = std::move(parsed.document.disclosures.front());
    return out;
}

}  // namespace refgate::codec
