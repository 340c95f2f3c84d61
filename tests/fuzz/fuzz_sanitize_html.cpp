// The disclosure HTML sanitiser. Invariants, checked on the output by a small reader of its own:
// only the allowed elements and attributes appear (so no script, style or event handler), every
// attribute value is quoted and escaped, every href is http, https or mailto, every a carries the
// sponsored rel, elements are balanced, text holds no raw '<' or '>', and sanitising the output
// again changes nothing.

#include <array>
#include <vector>

#include "fuzz_check.hpp"
#include "refgate/domain/html.hpp"

namespace {

constexpr std::array<std::string_view, 9> kElements{"p", "br",    "strong", "em", "b",
                                                    "i", "small", "span",   "a"};

bool allowed_element(std::string_view name) {
    for (auto e : kElements) {
        if (e == name) return true;
    }
    return false;
}

// Reads the attributes of a start tag (` name="value"` repeated) and checks them.
void check_attributes(std::string_view name, std::string_view attrs) {
    bool has_rel = false;
    bool has_href = false;
    while (!attrs.empty()) {
        FUZZ_CHECK(attrs.front() == ' ');
        auto eq = attrs.find("=\"");
        FUZZ_CHECK(eq != std::string_view::npos);
        auto attr = attrs.substr(1, eq - 1);
        auto close = attrs.find('"', eq + 2);
        FUZZ_CHECK(close != std::string_view::npos);
        auto value = attrs.substr(eq + 2, close - eq - 2);
        FUZZ_CHECK(value.find_first_of("<>'") == std::string_view::npos);
        if (attr == "href") {
            FUZZ_CHECK(name == "a");
            FUZZ_CHECK(value.starts_with("https://") || value.starts_with("http://") ||
                       value.starts_with("mailto:"));
            for (unsigned char c : value) FUZZ_CHECK(c > 0x20 && c != 0x7f);
            has_href = true;
        } else if (attr == "rel") {
            FUZZ_CHECK(name == "a");
            FUZZ_CHECK(value == refgate::domain::kSponsoredRel);
            has_rel = true;
        } else {
            FUZZ_CHECK(attr == "title" || attr == "lang");
        }
        attrs.remove_prefix(close + 1);
    }
    if (name == "a") FUZZ_CHECK(has_href && has_rel);
}

void check_output(std::string_view out) {
    std::vector<std::string_view> open;
    std::size_t pos = 0;
    while (pos < out.size()) {
        auto lt = out.find('<', pos);
        auto text = out.substr(pos, lt == std::string_view::npos ? lt : lt - pos);
        FUZZ_CHECK(text.find('>') == std::string_view::npos);
        if (lt == std::string_view::npos) break;
        auto gt = out.find('>', lt);
        FUZZ_CHECK(gt != std::string_view::npos);
        auto tag = out.substr(lt + 1, gt - lt - 1);
        if (tag.starts_with('/')) {
            FUZZ_CHECK(!open.empty() && open.back() == tag.substr(1));
            open.pop_back();
        } else {
            auto space = tag.find(' ');
            auto name = tag.substr(0, space);
            FUZZ_CHECK(allowed_element(name));
            check_attributes(name, space == std::string_view::npos ? "" : tag.substr(space));
            if (name != "br") open.push_back(name);
        }
        pos = gt + 1;
    }
    FUZZ_CHECK(open.empty());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    auto out = refgate::domain::sanitize_html(refgate::fuzz::as_text(data, size));
    check_output(out);
    FUZZ_CHECK(refgate::domain::sanitize_html(out) == out);
    return 0;
}
