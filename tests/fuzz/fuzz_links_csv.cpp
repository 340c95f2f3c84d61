// A links CSV file on its way through the import, as `POST /api/v1/import` (text/csv) and
// `refgate import FILE.csv` read it: parsed into the import document, checked by parse_import,
// and every refusal written out as the JSON and the text the API and the CLI answer with.
// Invariants: nothing throws (a CSV cell may hold any bytes, and JSON output must still be
// written); each link of the document has the line it started on, lines increase; every cell of
// a record that was read comes back in the document (empty cells left out, true/false as
// booleans); a file written back from the records, every field quoted, reads the same.

#include "fuzz_check.hpp"
#include "refgate/codec/import_diff.hpp"
#include "refgate/codec/links_csv.hpp"

namespace {

std::string quoted(const nlohmann::ordered_json& value) {
    std::string text =
        value.is_boolean() ? (value.get<bool>() ? "true" : "false") : value.get<std::string>();
    std::string out = "\"";
    for (char c : text) {
        if (c == '"') out += '"';
        out += c;
    }
    return out + "\"";
}

std::string written_back(const nlohmann::ordered_json& links) {
    static constexpr const char* kColumns[] = {"slug",       "partner",  "destination",    "status",
                                               "expires_at", "fallback", "utm_passthrough"};
    std::string out(refgate::codec::kLinksCsvHeader);
    out += "\r\n";
    for (const auto& link : links) {
        for (std::size_t i = 0; i < 7; ++i) {
            if (i > 0) out += ',';
            if (link.contains(kColumns[i])) out += quoted(link[kColumns[i]]);
        }
        out += "\r\n";
    }
    return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text = refgate::fuzz::as_text(data, size);
    const refgate::codec::LinksCsv csv = refgate::codec::parse_links_csv(text);
    const auto& links = csv.document["links"];
    FUZZ_CHECK(links.size() == csv.lines.size());
    for (std::size_t i = 1; i < csv.lines.size(); ++i) FUZZ_CHECK(csv.lines[i] > csv.lines[i - 1]);
    for (const auto& link : links) {
        for (const auto& [key, value] : link.items()) {
            FUZZ_CHECK(value.is_boolean() ? key == "utm_passthrough"
                                          : !value.get<std::string>().empty());
        }
    }
    FUZZ_CHECK(refgate::codec::parse_links_csv(written_back(links)).document == csv.document);

    // The import's answer, as the API and the CLI write it.
    const refgate::codec::ImportInput input = refgate::codec::read_import_text(text, true);
    FUZZ_CHECK(input.document.has_value());
    const refgate::codec::ParsedImport parsed = refgate::codec::parse_import(*input.document);
    const auto refused = refgate::codec::import_refusals(input, parsed.issues);
    const refgate::codec::ImportDiff diff;
    const std::string json = refgate::codec::import_result_json(diff, refused, true, false).dump();
    FUZZ_CHECK(!json.empty());
    FUZZ_CHECK(refgate::codec::import_result_text(diff, refused).size() >= refused.size());
    return 0;
}
