// A partner's commissions file on its way through the import, as
// `POST /api/v1/partners/{slug}/commissions` and `refgate commissions import` read it: CSV, or
// JSON when the input begins with '[' or '{', in refgate's format and the networks' (Impact's
// Actions, Awin's transactions); every row through check_commission(), and the import's answer
// written as the API writes it.
// Invariants: nothing throws (a cell may hold any bytes, and the JSON answer must still be
// written); CSV rows have the line they start on (after the header), lines increase, and a
// problem's line is the header's or a record's; no problem message repeats a value (checked by a
// mark, '@', that no message contains); a commission the check accepts, written back as one CSV
// row with every field quoted, reads and checks to the same commission.

#include "fuzz_check.hpp"
#include "refgate/codec/commissions_input.hpp"
#include "refgate/domain/commission.hpp"

namespace {

std::string csv_quoted(std::string_view text) {
    std::string out = "\"";
    for (char c : text) {
        if (c == '"') out += '"';
        out += c;
    }
    return out + "\"";
}

std::string written_back(const refgate::domain::Commission& c) {
    std::string out(refgate::domain::kCommissionsCsvHeader);
    out += "\r\n";
    const std::string cells[] = {c.order_id,
                                 c.subid,
                                 c.tracking_id,
                                 std::string(refgate::domain::to_string(c.status)),
                                 refgate::domain::to_string(c.amount),
                                 c.currency,
                                 refgate::domain::format_rfc3339(c.occurred_at)};
    for (std::size_t i = 0; i < std::size(cells); ++i) {
        if (i > 0) out += ',';
        out += csv_quoted(cells[i]);
    }
    return out + "\r\n";
}

// Every row of `input` through the check, into the import's answer; an accepted commission
// written back as refgate's CSV reads and checks to the same commission.
void check_rows(const refgate::codec::CommissionsInput& input, bool csv) {
    if (csv) {
        for (std::size_t i = 0; i < input.rows.size(); ++i) {
            FUZZ_CHECK(input.rows[i].line >= 2);
            if (i > 0) FUZZ_CHECK(input.rows[i].line > input.rows[i - 1].line);
        }
    }
    refgate::codec::CommissionsReport report;
    for (const auto& p : input.problems) {
        FUZZ_CHECK(p.message.find('@') == std::string::npos);
        report.refused.push_back(p);
    }
    for (const auto& row : input.rows) {
        auto f = row.fields;
        const auto check = refgate::domain::check_commission(f);
        FUZZ_CHECK(check.commission.has_value() == check.problems.empty());
        for (const auto& p : check.problems) {
            FUZZ_CHECK(f.field(p.field) != nullptr);
            FUZZ_CHECK(p.message.find('@') == std::string::npos);
            report.refused.push_back({row.line, p.field, p.message});
        }
        if (!check.commission) continue;
        const auto again = refgate::codec::parse_commissions_csv(written_back(*check.commission));
        FUZZ_CHECK(again.problems.empty() && again.rows.size() == 1);
        const auto rechecked = refgate::domain::check_commission(again.rows[0].fields);
        FUZZ_CHECK(rechecked.commission && *rechecked.commission == *check.commission);
    }
    // The import's answer as the API writes it.
    FUZZ_CHECK(!refgate::codec::view_json(report).dump().empty());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text = refgate::fuzz::as_text(data, size);
    const bool json = !text.empty() && (text[0] == '[' || text[0] == '{');
    if (json && nlohmann::json::parse(text, nullptr, false).is_discarded()) return 0;
    // refgate's own format and the networks' (Impact's Actions as CSV or JSON, Awin's JSON).
    for (auto format :
         {refgate::codec::CommissionsFormat::refgate, refgate::codec::CommissionsFormat::impact,
          refgate::codec::CommissionsFormat::awin}) {
        if (!json && format == refgate::codec::CommissionsFormat::awin) continue;
        check_rows(refgate::codec::read_commissions(text, format, !json), !json);
    }
    return 0;
}
