#include "refgate/domain/html.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "refgate/domain/ascii.hpp"
#include "refgate/domain/utf8.hpp"

namespace refgate::domain {
namespace {

// Deeper nesting than this is not needed for a disclosure; further start tags are dropped.
constexpr std::size_t kMaxDepth = 32;
// Attributes read per tag; the rest are ignored.
constexpr std::size_t kMaxAttributes = 32;

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }
using ascii::is_alpha;
using ascii::is_digit;
using ascii::lowered;
using ascii::to_lower;

bool iequals_prefix(std::string_view text, std::string_view prefix) {
    if (text.size() < prefix.size()) return false;
    for (std::size_t i = 0; i < prefix.size(); ++i) {
        if (to_lower(text[i]) != prefix[i]) return false;
    }
    return true;
}

// The named references editors plausibly type, plus those used to hide a "javascript:" scheme.
// A name not listed stays as literal text (its '&' is escaped), which is always safe.
constexpr std::array<std::pair<std::string_view, std::uint32_t>, 27> kNamedReferences{{
    {"amp", '&'},      {"lt", '<'},       {"gt", '>'},       {"quot", '"'},      {"apos", '\''},
    {"nbsp", 0xA0},    {"mdash", 0x2014}, {"ndash", 0x2013}, {"hellip", 0x2026}, {"rsquo", 0x2019},
    {"lsquo", 0x2018}, {"ldquo", 0x201C}, {"rdquo", 0x201D}, {"laquo", 0xAB},    {"raquo", 0xBB},
    {"copy", 0xA9},    {"reg", 0xAE},     {"trade", 0x2122}, {"euro", 0x20AC},   {"bull", 0x2022},
    {"middot", 0xB7},  {"colon", ':'},    {"Tab", '\t'},     {"NewLine", '\n'},  {"sol", '/'},
    {"lpar", '('},     {"rpar", ')'},
}};

// A control character (other than tab and line breaks) that has no business in a disclosure.
bool dropped_control(std::uint32_t cp) {
    return (cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') || cp == 0x7F;
}

// Decodes character references (&amp; &#38; &#x26;, numeric ones also without ';') and drops
// control characters, so that what is checked is what a browser would see.
std::string decode_text(std::string_view in) {
    std::string out;
    out.reserve(in.size());
    std::size_t i = 0;
    while (i < in.size()) {
        char c = in[i];
        if (c != '&') {
            if (!dropped_control(static_cast<unsigned char>(c))) out.push_back(c);
            ++i;
            continue;
        }
        std::size_t j = i + 1;
        if (j < in.size() && in[j] == '#') {
            ++j;
            bool hex = j < in.size() && (in[j] == 'x' || in[j] == 'X');
            if (hex) ++j;
            std::size_t start = j;
            std::uint64_t value = 0;
            while (j < in.size() && j - start < 10) {
                char d = in[j];
                int digit = is_digit(d) ? d - '0'
                            : hex && to_lower(d) >= 'a' && to_lower(d) <= 'f'
                                ? to_lower(d) - 'a' + 10
                                : -1;
                if (digit < 0) break;
                value = value * (hex ? 16 : 10) + static_cast<std::uint64_t>(digit);
                ++j;
            }
            if (j == start) {  // "&#" without digits: literal text
                out.push_back('&');
                ++i;
                continue;
            }
            if (j < in.size() && in[j] == ';') ++j;
            auto cp = static_cast<std::uint32_t>(value > 0x10FFFF ? 0xFFFD : value);
            if (cp == 0 || (cp >= 0xD800 && cp <= 0xDFFF)) cp = 0xFFFD;
            if (!dropped_control(cp)) append_utf8(out, cp);
            i = j;
            continue;
        }
        std::size_t start = j;
        while (j < in.size() && j - start < 16 && (is_alpha(in[j]) || is_digit(in[j]))) ++j;
        if (j < in.size() && in[j] == ';') {
            std::string_view name = in.substr(start, j - start);
            bool found = false;
            for (const auto& [entity, cp] : kNamedReferences) {
                if (entity == name) {
                    append_utf8(out, cp);
                    found = true;
                    break;
                }
            }
            if (found) {
                i = j + 1;
                continue;
            }
        }
        out.push_back('&');
        ++i;
    }
    return out;
}

enum class Tag { p, br, strong, em, b, i, small, span, a, other };

constexpr std::array<std::string_view, 9> kAllowed{"p", "br",    "strong", "em", "b",
                                                   "i", "small", "span",   "a"};

Tag tag_of(std::string_view name) {
    for (std::size_t i = 0; i < kAllowed.size(); ++i) {
        if (kAllowed[i] == name) return static_cast<Tag>(i);
    }
    return Tag::other;
}

std::string_view name_of(Tag tag) { return kAllowed[static_cast<std::size_t>(tag)]; }

// Elements whose content is code or raw text: removed together with everything inside.
bool dropped_with_content(std::string_view name) {
    static constexpr std::array<std::string_view, 12> kDropped{
        "script", "style",   "iframe",   "noscript", "template", "textarea",
        "title",  "noembed", "noframes", "xmp",      "object",   "plaintext"};
    for (auto d : kDropped) {
        if (d == name) return true;
    }
    return false;
}

// http, https and mailto only; anything else (javascript:, data:, relative URLs) is refused.
// `value` is already decoded; whitespace and control characters inside are removed the way
// browsers ignore them in URLs.
std::optional<std::string> safe_href(std::string_view value) {
    std::string url;
    for (char c : value) {
        if (static_cast<unsigned char>(c) > 0x20 && c != 0x7F) url.push_back(c);
    }
    if (url.size() > 2048) return std::nullopt;
    for (std::string_view scheme : {"https://", "http://", "mailto:"}) {
        if (iequals_prefix(url, scheme) && url.size() > scheme.size()) {
            for (std::size_t i = 0; i < scheme.size(); ++i) url[i] = scheme[i];
            return url;
        }
    }
    return std::nullopt;
}

bool valid_lang(std::string_view value) {
    if (value.empty() || value.size() > 35) return false;
    for (char c : value) {
        if (!is_alpha(c) && !is_digit(c) && c != '-') return false;
    }
    return true;
}

struct Attribute {
    std::string name;   // lower case
    std::string value;  // decoded
};

class Sanitizer {
  public:
    explicit Sanitizer(std::string_view in) : in_(in) {}

    std::string run() {
        while (pos_ < in_.size()) {
            auto lt = in_.find('<', pos_);
            if (lt == std::string_view::npos) lt = in_.size();
            if (lt > pos_) append_escaped_html(out_, decode_text(in_.substr(pos_, lt - pos_)));
            pos_ = lt;
            if (pos_ < in_.size()) markup();
        }
        while (!open_.empty()) close_top();
        return std::move(out_);
    }

  private:
    char at(std::size_t i) const { return i < in_.size() ? in_[i] : '\0'; }

    // pos_ is at a '<'.
    void markup() {
        char next = at(pos_ + 1);
        if (next == '!' || next == '?') {
            if (in_.substr(pos_).starts_with("<!--")) {
                auto end = in_.find("-->", pos_ + 4);
                pos_ = end == std::string_view::npos ? in_.size() : end + 3;
            } else {
                skip_past('>');
            }
            return;
        }
        if (next == '/') {
            if (is_alpha(at(pos_ + 2))) {
                pos_ += 2;
                std::string name = read_name();
                skip_past('>');
                end_tag(name);
            } else {
                skip_past('>');  // "</>" and "</ 3": ignored, as browsers do
            }
            return;
        }
        if (is_alpha(next)) {
            ++pos_;
            std::string name = read_name();
            std::vector<Attribute> attributes;
            if (!read_attributes(attributes)) {
                pos_ = in_.size();  // the tag never ends: it and what follows are not markup
                return;
            }
            start_tag(name, attributes);
            return;
        }
        out_.append("&lt;");  // a stray '<' is text
        ++pos_;
    }

    void skip_past(char c) {
        auto end = in_.find(c, pos_);
        pos_ = end == std::string_view::npos ? in_.size() : end + 1;
    }

    std::string read_name() {
        std::size_t start = pos_;
        while (pos_ < in_.size() && !is_space(in_[pos_]) && in_[pos_] != '/' && in_[pos_] != '>')
            ++pos_;
        return lowered(in_.substr(start, pos_ - start));
    }

    // Reads attributes up to and including the closing '>'. False when the input ends first.
    bool read_attributes(std::vector<Attribute>& attributes) {
        while (true) {
            while (pos_ < in_.size() && (is_space(in_[pos_]) || in_[pos_] == '/')) ++pos_;
            if (pos_ >= in_.size()) return false;
            if (in_[pos_] == '>') {
                ++pos_;
                return true;
            }
            std::size_t start = pos_;
            ++pos_;  // a name may start with '=' or a quote
            while (pos_ < in_.size() && !is_space(in_[pos_]) && in_[pos_] != '/' &&
                   in_[pos_] != '>' && in_[pos_] != '=')
                ++pos_;
            std::string name = lowered(in_.substr(start, pos_ - start));
            while (pos_ < in_.size() && is_space(in_[pos_])) ++pos_;
            std::string value;
            if (at(pos_) == '=') {
                ++pos_;
                while (pos_ < in_.size() && is_space(in_[pos_])) ++pos_;
                char quote = at(pos_);
                if (quote == '"' || quote == '\'') {
                    auto end = in_.find(quote, pos_ + 1);
                    if (end == std::string_view::npos) return false;
                    value = decode_text(in_.substr(pos_ + 1, end - pos_ - 1));
                    pos_ = end + 1;
                } else {
                    std::size_t vstart = pos_;
                    while (pos_ < in_.size() && !is_space(in_[pos_]) && in_[pos_] != '>') ++pos_;
                    value = decode_text(in_.substr(vstart, pos_ - vstart));
                }
            }
            bool duplicate = false;
            for (const auto& a : attributes) duplicate = duplicate || a.name == name;
            if (!duplicate && attributes.size() < kMaxAttributes)
                attributes.push_back({std::move(name), std::move(value)});
        }
    }

    void start_tag(const std::string& name, const std::vector<Attribute>& attributes) {
        if (dropped_with_content(name)) {
            skip_content_of(name);
            return;
        }
        Tag tag = tag_of(name);
        if (tag == Tag::other) return;
        auto find = [&attributes](std::string_view n) -> const std::string* {
            for (const auto& a : attributes) {
                if (a.name == n) return &a.value;
            }
            return nullptr;
        };
        if (tag == Tag::br) {
            out_.append("<br>");
            return;
        }
        if (open_.size() >= kMaxDepth) return;
        std::optional<std::string> href;
        if (tag == Tag::a) {
            if (is_open(Tag::a)) return;  // links do not nest
            const std::string* given = find("href");
            if (given != nullptr) href = safe_href(*given);
            if (!href) return;  // no safe target: the text stays, unlinked
        }
        if (tag == Tag::p && is_open(Tag::p)) close_through(Tag::p);
        out_.push_back('<');
        out_.append(name_of(tag));
        if (href) append_attribute("href", *href);
        if (const std::string* title = find("title")) append_attribute("title", *title);
        if (const std::string* lang = find("lang"); lang != nullptr && valid_lang(*lang))
            append_attribute("lang", *lang);
        if (tag == Tag::a) append_attribute("rel", kSponsoredRel);
        out_.push_back('>');
        open_.push_back(tag);
    }

    void end_tag(const std::string& name) {
        Tag tag = tag_of(name);
        if (tag != Tag::other && tag != Tag::br && is_open(tag)) close_through(tag);
    }

    // Skips to the end of "</name ...>", or to the end of the input.
    void skip_content_of(const std::string& name) {
        while (pos_ < in_.size()) {
            auto lt = in_.find("</", pos_);
            if (lt == std::string_view::npos) break;
            std::size_t after = lt + 2 + name.size();
            if (iequals_prefix(in_.substr(lt + 2), name) &&
                (after >= in_.size() || is_space(in_[after]) || in_[after] == '/' ||
                 in_[after] == '>')) {
                pos_ = after;
                skip_past('>');
                return;
            }
            pos_ = lt + 2;
        }
        pos_ = in_.size();
    }

    void append_attribute(std::string_view name, std::string_view value) {
        out_.push_back(' ');
        out_.append(name);
        out_.append("=\"");
        append_escaped_html(out_, value);
        out_.push_back('"');
    }

    bool is_open(Tag tag) const {
        for (Tag t : open_) {
            if (t == tag) return true;
        }
        return false;
    }

    void close_top() {
        out_.append("</");
        out_.append(name_of(open_.back()));
        out_.push_back('>');
        open_.pop_back();
    }

    void close_through(Tag tag) {
        while (!open_.empty()) {
            bool last = open_.back() == tag;
            close_top();
            if (last) return;
        }
    }

    std::string_view in_;
    std::size_t pos_ = 0;
    std::string out_;
    std::vector<Tag> open_;
};

}  // namespace

std::string text_to_html(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    std::size_t pos = 0;
    while (pos <= text.size()) {
        auto nl = text.find('\n', pos);
        std::string_view line = text.substr(pos, nl == std::string_view::npos ? nl : nl - pos);
        if (line.ends_with('\r')) line.remove_suffix(1);
        append_escaped_html(out, line);
        if (nl == std::string_view::npos) break;
        out.append("<br>");
        pos = nl + 1;
    }
    return out;
}

std::string sanitize_html(std::string_view html) { return Sanitizer(html).run(); }

std::string link_snippet(std::string_view href, std::string_view label,
                         const std::string* disclosure_text) {
    std::string html = "<a href=\"";
    append_escaped_html(html, href);
    html.append("\" rel=\"").append(kSponsoredRel).append("\">");
    append_escaped_html(html, label);
    html.append("</a>");
    if (disclosure_text != nullptr) {
        html.append(" <small class=\"refgate-disclosure\">");
        append_escaped_html(html, *disclosure_text);
        html.append("</small>");
    }
    return html;
}

}  // namespace refgate::domain
