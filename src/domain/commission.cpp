#include "refgate/domain/commission.hpp"

#include <algorithm>

#include "refgate/domain/placement.hpp"

namespace refgate::domain {
namespace {

// ISO 4217's currencies for money (no precious metals, bond units, fund codes or test codes),
// sorted. ANG stays beside its successor XCG, and ZWL beside ZWG, for reports of older orders.
constexpr std::array<std::string_view, 160> kCurrencies{
    "AED", "AFN", "ALL", "AMD", "ANG", "AOA", "ARS", "AUD", "AWG", "AZN", "BAM", "BBD", "BDT",
    "BGN", "BHD", "BIF", "BMD", "BND", "BOB", "BRL", "BSD", "BTN", "BWP", "BYN", "BZD", "CAD",
    "CDF", "CHF", "CLP", "CNY", "COP", "CRC", "CUC", "CUP", "CVE", "CZK", "DJF", "DKK", "DOP",
    "DZD", "EGP", "ERN", "ETB", "EUR", "FJD", "FKP", "GBP", "GEL", "GHS", "GIP", "GMD", "GNF",
    "GTQ", "GYD", "HKD", "HNL", "HTG", "HUF", "IDR", "ILS", "INR", "IQD", "IRR", "ISK", "JMD",
    "JOD", "JPY", "KES", "KGS", "KHR", "KMF", "KPW", "KRW", "KWD", "KYD", "KZT", "LAK", "LBP",
    "LKR", "LRD", "LSL", "LYD", "MAD", "MDL", "MGA", "MKD", "MMK", "MNT", "MOP", "MRU", "MUR",
    "MVR", "MWK", "MXN", "MYR", "MZN", "NAD", "NGN", "NIO", "NOK", "NPR", "NZD", "OMR", "PAB",
    "PEN", "PGK", "PHP", "PKR", "PLN", "PYG", "QAR", "RON", "RSD", "RUB", "RWF", "SAR", "SBD",
    "SCR", "SDG", "SEK", "SGD", "SHP", "SLE", "SLL", "SOS", "SRD", "SSP", "STN", "SVC", "SYP",
    "SZL", "THB", "TJS", "TMT", "TND", "TOP", "TRY", "TTD", "TWD", "TZS", "UAH", "UGX", "USD",
    "UYU", "UZS", "VED", "VES", "VND", "VUV", "WST", "XAF", "XCD", "XCG", "XOF", "XPF", "YER",
    "ZAR", "ZMW", "ZWG", "ZWL"};

bool decimal_digit(char c) noexcept { return c >= '0' && c <= '9'; }
bool id_char(char c) noexcept {
    return decimal_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

bool valid_order_id(std::string_view id) noexcept {
    if (id.empty() || id.size() > kMaxOrderId || !id_char(id.front())) return false;
    return std::all_of(id.begin(), id.end(), [](char c) {
        return id_char(c) || c == '_' || c == '.' || c == ':' || c == '/' || c == '#' || c == '-';
    });
}

bool valid_tracking_id(std::string_view id) noexcept {
    if (id.empty() || id.size() > kMaxTrackingId) return false;
    return std::all_of(id.begin(), id.end(),
                       [](char c) { return id_char(c) || c == '_' || c == '.' || c == '-'; });
}

// Networks write statuses in upper case ("APPROVED"); the names are the same.
std::string lower_status(std::string text) {
    for (char& c : text) {
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
    return text;
}

const std::string* given(const std::optional<std::string>& field) noexcept {
    return field && !field->empty() ? &*field : nullptr;
}

}  // namespace

std::string_view to_string(CommissionStatus status) noexcept {
    switch (status) {
        case CommissionStatus::approved:
            return "approved";
        case CommissionStatus::reversed:
            return "reversed";
        case CommissionStatus::paid:
            return "paid";
        default:
            return "pending";
    }
}

std::optional<CommissionStatus> parse_commission_status(std::string_view text) noexcept {
    for (auto s : {CommissionStatus::pending, CommissionStatus::approved,
                   CommissionStatus::reversed, CommissionStatus::paid}) {
        if (text == to_string(s)) return s;
    }
    return std::nullopt;
}

std::optional<Amount> parse_amount(std::string_view text) noexcept {
    auto point = text.find('.');
    std::string_view whole = text.substr(0, point);
    std::string_view fraction =
        point == std::string_view::npos ? std::string_view() : text.substr(point + 1);
    if (whole.empty() || whole.size() > kMaxAmountIntegerDigits) return std::nullopt;
    if (point != std::string_view::npos && (fraction.empty() || fraction.size() > kMaxAmountScale))
        return std::nullopt;
    Amount amount;
    for (std::string_view part : {whole, fraction}) {
        for (char c : part) {
            if (!decimal_digit(c)) return std::nullopt;
            // At most 18 digits in all: no overflow of int64.
            amount.units = amount.units * 10 + (c - '0');
        }
    }
    amount.scale = static_cast<int>(fraction.size());
    return amount;
}

std::string to_string(const Amount& amount) {
    std::string digits = std::to_string(amount.units);
    auto scale = static_cast<std::size_t>(amount.scale);
    if (scale == 0) return digits;
    if (digits.size() <= scale) digits.insert(0, scale + 1 - digits.size(), '0');
    digits.insert(digits.size() - scale, 1, '.');
    return digits;
}

bool valid_currency(std::string_view code) noexcept {
    return std::binary_search(kCurrencies.begin(), kCurrencies.end(), code);
}

std::optional<std::string>* CommissionFields::field(std::string_view name) noexcept {
    if (name == "order_id") return &order_id;
    if (name == "subid") return &subid;
    if (name == "tracking_id") return &tracking_id;
    if (name == "status") return &status;
    if (name == "amount") return &amount;
    if (name == "currency") return &currency;
    if (name == "occurred_at") return &occurred_at;
    return nullptr;
}

std::optional<std::int64_t> opaque_token_link(std::string_view token) noexcept {
    auto parsed = parse_opaque_token(token);
    if (!parsed) return std::nullopt;
    return parsed->link_id;
}

std::optional<std::size_t> readable_token_link(const Partner& partner, std::string_view token,
                                               std::span<const std::string> slugs) {
    auto charset = SubidCharset::parse(partner.subid_charset);
    if (!charset) return std::nullopt;
    for (std::size_t i = 0; i < slugs.size(); ++i) {
        std::string prefix = readable_prefix(slugs[i], *charset);
        if (!prefix.empty() && token.starts_with(prefix)) return i;
    }
    return std::nullopt;
}

std::optional<std::string> token_channel(const Partner& partner, std::int64_t link_id,
                                         std::string_view slug, std::string_view token,
                                         std::span<const std::string> channels) {
    for (const auto& channel : channels) {
        if (placement_token(partner, link_id, slug, channel) == token) return channel;
    }
    return std::nullopt;
}

std::optional<std::string> tracking_id_channel(const Partner& partner,
                                               std::string_view tracking_id) {
    for (const auto& code : partner.channel_codes) {
        if (code.ref_code == tracking_id && !code.channel.ends_with('*')) return code.channel;
    }
    return std::nullopt;
}

std::optional<SysSeconds> parse_commission_time(std::string_view text) {
    if (auto t = parse_rfc3339(text)) return t;
    // The networks' "YYYY-MM-DD HH:MM:SS" (or with a 'T'), without an offset: UTC.
    constexpr std::size_t kLocalLength = 19;
    if (text.size() != kLocalLength) return std::nullopt;
    std::string utc(text);
    utc += 'Z';
    return parse_rfc3339(utc);
}

CommissionCheck check_commission(const CommissionFields& f) {
    CommissionCheck check;
    auto& problems = check.problems;
    Commission c;
    if (const auto* id = given(f.order_id); id == nullptr) {
        problems.push_back({"order_id", "is required"});
    } else if (!valid_order_id(*id)) {
        problems.push_back({"order_id",
                            "must be 1 to 128 of A-Z a-z 0-9 _ . : / # -, beginning with a letter "
                            "or digit"});
    } else {
        c.order_id = *id;
    }
    const auto* subid = given(f.subid);
    const auto* tracking = given(f.tracking_id);
    if (subid == nullptr && tracking == nullptr) {
        problems.push_back({"subid", "give subid (a placement token) or tracking_id"});
    } else if (subid != nullptr && tracking != nullptr) {
        problems.push_back({"tracking_id", "give subid or tracking_id, not both"});
    } else if (subid != nullptr && !valid_placement_token(*subid)) {
        problems.push_back({"subid", "must be a placement token: 1 to 113 of A-Z a-z 0-9 _ . -"});
    } else if (tracking != nullptr && !valid_tracking_id(*tracking)) {
        problems.push_back({"tracking_id", "must be 1 to 128 of A-Z a-z 0-9 _ . -"});
    } else {
        c.subid = subid != nullptr ? *subid : std::string();
        c.tracking_id = tracking != nullptr ? *tracking : std::string();
    }
    if (const auto* s = given(f.status); s == nullptr) {
        problems.push_back({"status", "is required"});
    } else if (auto status = parse_commission_status(lower_status(*s))) {
        c.status = *status;
    } else {
        problems.push_back({"status", "must be pending, approved, reversed or paid"});
    }
    if (const auto* a = given(f.amount); a == nullptr) {
        problems.push_back({"amount", "is required"});
    } else if (auto amount = parse_amount(*a)) {
        c.amount = *amount;
    } else {
        problems.push_back({"amount",
                            "must be a decimal number such as 12.50: digits, at most 12 before "
                            "the point and 6 after it, no sign or separators"});
    }
    if (const auto* cur = given(f.currency); cur == nullptr) {
        problems.push_back({"currency", "is required"});
    } else if (valid_currency(*cur)) {
        c.currency = *cur;
    } else {
        problems.push_back({"currency", "must be an ISO 4217 code in upper case, such as USD"});
    }
    if (const auto* at = given(f.occurred_at); at == nullptr) {
        problems.push_back({"occurred_at", "is required"});
    } else if (auto t = parse_commission_time(*at)) {
        c.occurred_at = *t;
    } else {
        problems.push_back({"occurred_at",
                            "must be an RFC 3339 time such as 2026-11-29T16:00:00Z, or "
                            "2026-11-29 16:00:00 in UTC"});
    }
    if (problems.empty()) check.commission = std::move(c);
    return check;
}

}  // namespace refgate::domain
