// The snapshot file's reader. Most of a start from the file went into nlohmann's lexer (a token
// string per value, a json value per scalar) and a vector of 100,000 Links kept until the
// snapshot was built. This reader scans the text itself: the links array goes straight from the
// text into Snapshot::Builder one link at a time; the small members (partners, disclosures) are
// still handed to nlohmann as they are.

#include "refgate/codec/snapshot_file.hpp"

#include <array>
#include <chrono>
#include <cstring>
#include <istream>
#include <limits>
#include <optional>
#include <stdexcept>

#include "refgate/codec/disclosure_json.hpp"
#include "refgate/codec/domains_json.hpp"
#include "refgate/codec/import_document.hpp"
#include "refgate/domain/utf8.hpp"

namespace refgate::codec {
namespace {

// Deeper nesting than this in a member we skip is refused rather than followed: a hand-edited
// file must not be able to exhaust the stack.
constexpr int kMaxDepth = 256;

// A strict JSON scanner (RFC 8259) over the whole text. Strings are not checked to be valid
// UTF-8: nothing read from them is used unchecked (slugs, URLs and statuses are validated
// afterwards, and the partners and disclosures go through nlohmann).
class Cursor {
  public:
    explicit Cursor(std::string_view text) : text_(text) {}

    [[noreturn]] void fail(const std::string& what) const {
        throw std::runtime_error("snapshot file: " + what + " at byte " + std::to_string(pos_));
    }

    std::size_t pos() const { return pos_; }
    void seek(std::size_t pos) { pos_ = pos; }

    char peek() {
        skip_whitespace();
        return pos_ < text_.size() ? text_[pos_] : '\0';
    }
    bool at_end() {
        skip_whitespace();
        return pos_ == text_.size();
    }
    void expect(char c) {
        if (peek() != c) fail(std::string("expected '") + c + "'");
        ++pos_;
    }
    bool consume(char c) {
        if (peek() != c) return false;
        ++pos_;
        return true;
    }

    // A string, decoded into `out` (replacing what it held), or only checked when out is null.
    void string(std::string* out) {
        expect('"');
        if (out != nullptr) out->clear();
        for (;;) {
            std::size_t start = pos_;
            skip_plain_words();
            while (pos_ < text_.size()) {
                auto c = static_cast<unsigned char>(text_[pos_]);
                if (c == '"' || c == '\\' || c < 0x20) break;
                ++pos_;
            }
            if (out != nullptr) out->append(text_.substr(start, pos_ - start));
            if (pos_ == text_.size()) fail("unterminated string");
            char c = text_[pos_++];
            if (c == '"') return;
            if (c != '\\') fail("control character in a string");
            if (pos_ == text_.size()) fail("unterminated string");
            char e = text_[pos_++];
            char plain = 0;
            switch (e) {
                case '"':
                    plain = '"';
                    break;
                case '\\':
                    plain = '\\';
                    break;
                case '/':
                    plain = '/';
                    break;
                case 'b':
                    plain = '\b';
                    break;
                case 'f':
                    plain = '\f';
                    break;
                case 'n':
                    plain = '\n';
                    break;
                case 'r':
                    plain = '\r';
                    break;
                case 't':
                    plain = '\t';
                    break;
                case 'u': {
                    std::uint32_t cp = hex4();
                    if (cp >= 0xDC00 && cp <= 0xDFFF) fail("lone low surrogate");
                    if (cp >= 0xD800 && cp <= 0xDBFF) {
                        if (text_.substr(pos_, 2) != "\\u") fail("lone high surrogate");
                        pos_ += 2;
                        std::uint32_t low = hex4();
                        if (low < 0xDC00 || low > 0xDFFF) fail("bad surrogate pair");
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                    }
                    if (out != nullptr) domain::append_utf8(*out, cp);
                    continue;
                }
                default:
                    fail("bad escape in a string");
            }
            if (out != nullptr) out->push_back(plain);
        }
    }

    // An integer without fraction or exponent.
    std::int64_t integer() {
        skip_whitespace();
        bool negative = pos_ < text_.size() && text_[pos_] == '-';
        if (negative) ++pos_;
        std::uint64_t magnitude = digits();
        std::uint64_t limit = negative ? std::uint64_t{1} << 63 : (std::uint64_t{1} << 63) - 1;
        if (magnitude > limit) fail("integer out of range");
        if (!negative) return static_cast<std::int64_t>(magnitude);
        return magnitude == limit ? std::numeric_limits<std::int64_t>::min()
                                  : -static_cast<std::int64_t>(magnitude);
    }
    std::uint64_t unsigned_integer() {
        skip_whitespace();
        return digits();
    }

    bool boolean() {
        skip_whitespace();
        if (literal("true")) return true;
        if (literal("false")) return false;
        fail("expected true or false");
    }
    bool null() {
        skip_whitespace();
        return literal("null");
    }

    // Calls each() for every member of the object at the cursor, with the cursor at the member's
    // value and its name in *key (only checked when key is null).
    template <typename Each>
    void each_member(std::string* key, Each each) {
        expect('{');
        if (consume('}')) return;
        do {
            string(key);
            expect(':');
            each();
        } while (consume(','));
        expect('}');
    }

    // Calls each() for every element of the array at the cursor, with the cursor at the element.
    template <typename Each>
    void each_element(Each each) {
        expect('[');
        if (consume(']')) return;
        do {
            each();
        } while (consume(','));
        expect(']');
    }

    // Checks one value of any kind and returns its text.
    std::string_view skip_value(int depth = 0) {
        if (depth > kMaxDepth) fail("nested too deeply");
        char c = peek();
        std::size_t start = pos_;
        if (c == '{') {
            each_member(nullptr, [&] { skip_value(depth + 1); });
        } else if (c == '[') {
            each_element([&] { skip_value(depth + 1); });
        } else if (c == '"') {
            string(nullptr);
        } else if (c == '-' || (c >= '0' && c <= '9')) {
            number();
        } else if (!literal("true") && !literal("false") && !literal("null")) {
            fail("expected a value");
        }
        return text_.substr(start, pos_ - start);
    }

  private:
    void skip_whitespace() {
        while (pos_ < text_.size()) {
            char c = text_[pos_];
            if (c != ' ' && c != '\n' && c != '\r' && c != '\t') break;
            ++pos_;
        }
    }

    // Steps over string bytes eight at a time while none of them is '"', '\\' or a control
    // character (the byte loop after it finds which one): strings were most of the reading.
    void skip_plain_words() {
        constexpr std::uint64_t kOnes = 0x0101010101010101ull;
        constexpr std::uint64_t kHighs = 0x8080808080808080ull;
        while (text_.size() - pos_ >= 8) {
            std::uint64_t word = 0;
            std::memcpy(&word, text_.data() + pos_, 8);
            // A byte of x is zero (or, for the last term, below 0x20) where its high bit is set.
            auto zero_byte = [&](std::uint64_t x) { return (x - kOnes) & ~x & kHighs; };
            std::uint64_t special = zero_byte(word ^ (kOnes * '"')) |
                                    zero_byte(word ^ (kOnes * '\\')) |
                                    ((word - kOnes * 0x20) & ~word & kHighs);
            if (special != 0) return;
            pos_ += 8;
        }
    }

    bool literal(std::string_view word) {
        if (text_.substr(pos_, word.size()) != word) return false;
        pos_ += word.size();
        return true;
    }

    bool is_digit() const {
        return pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9';
    }

    std::uint64_t digits() {
        if (!is_digit()) fail("expected a number");
        if (text_[pos_] == '0' && pos_ + 1 < text_.size() && text_[pos_ + 1] >= '0' &&
            text_[pos_ + 1] <= '9') {
            fail("leading zero");
        }
        std::uint64_t value = 0;
        while (is_digit()) {
            auto d = static_cast<std::uint64_t>(text_[pos_++] - '0');
            if (value > (std::numeric_limits<std::uint64_t>::max() - d) / 10)
                fail("integer out of range");
            value = value * 10 + d;
        }
        if (pos_ < text_.size() && (text_[pos_] == '.' || text_[pos_] == 'e' || text_[pos_] == 'E'))
            fail("expected an integer");
        return value;
    }

    void number() {
        if (text_[pos_] == '-') ++pos_;
        if (!is_digit()) fail("expected a number");
        if (text_[pos_] == '0') {
            ++pos_;
        } else {
            while (is_digit()) ++pos_;
        }
        if (pos_ < text_.size() && text_[pos_] == '.') {
            ++pos_;
            if (!is_digit()) fail("expected a digit");
            while (is_digit()) ++pos_;
        }
        if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
            ++pos_;
            if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
            if (!is_digit()) fail("expected a digit");
            while (is_digit()) ++pos_;
        }
    }

    std::uint32_t hex4() {
        if (text_.size() - pos_ < 4) fail("short \\u escape");
        std::uint32_t value = 0;
        for (int i = 0; i < 4; ++i) {
            char c = text_[pos_++];
            value <<= 4;
            if (c >= '0' && c <= '9') {
                value |= static_cast<std::uint32_t>(c - '0');
            } else if (c >= 'a' && c <= 'f') {
                value |= static_cast<std::uint32_t>(c - 'a' + 10);
            } else if (c >= 'A' && c <= 'F') {
                value |= static_cast<std::uint32_t>(c - 'A' + 10);
            } else {
                fail("bad \\u escape");
            }
        }
        return value;
    }

    std::string_view text_;
    std::size_t pos_ = 0;
};

// A link's targeting rules: rare, so parsed as JSON by the import format's reader.
void read_file_rules(Cursor& in, domain::Link& link, std::string& /*scratch*/) {
    std::string_view text = in.skip_value(1);
    try {
        link.rules = rules_from_json(nlohmann::ordered_json::parse(text));
    } catch (const std::exception& e) {
        in.fail("link " + link.slug + ": " + e.what());
    }
}

void read_file_status(Cursor& in, domain::Link& link, std::string& scratch) {
    in.string(&scratch);
    auto status = domain::parse_link_status(scratch);
    if (!status) in.fail("link " + link.slug + ": bad status");
    link.status = *status;
}

void read_file_expiry(Cursor& in, domain::Link& link, std::string& scratch) {
    if (in.null()) {
        link.expires_at.reset();
        return;
    }
    in.string(&scratch);
    link.expires_at = domain::parse_rfc3339(scratch);
    if (!link.expires_at) in.fail("link " + link.slug + ": bad expires_at");
}

// What automatic fallback switched away when the file was written.
void read_file_switches(Cursor& in, domain::Link& link, std::string& scratch) {
    in.each_element([&] {
        in.string(&scratch);
        link.fallback_switches.push_back({scratch, "", "", 0});
    });
}

// The members every link has, as bits of what read_file_link() has seen.
enum FileLinkRequired : unsigned { kSlug = 1, kPartner = 2, kDestination = 4, kStatus = 8 };
constexpr unsigned kAllRequired = kSlug | kPartner | kDestination | kStatus;

// One member of a link in the file and how it is read at the cursor (`scratch` is a string the
// reader may reuse), as the import format's kLinkFields does for a link in an import document.
// A new link field is an entry here.
struct FileLinkField {
    std::string_view name;
    unsigned required;  // its FileLinkRequired bit, 0 for an optional member
    void (*read)(Cursor& in, domain::Link& link, std::string& scratch);
};

const FileLinkField kFileLinkFields[] = {
    // Who the link is and where it sends.
    {"id", 0, [](Cursor& in, domain::Link& l, std::string&) { l.id = in.integer(); }},
    {"slug", kSlug, [](Cursor& in, domain::Link& l, std::string&) { in.string(&l.slug); }},
    {"partner", kPartner, [](Cursor& in, domain::Link& l, std::string&) { in.string(&l.partner); }},
    {"destination", kDestination,
     [](Cursor& in, domain::Link& l, std::string&) { in.string(&l.destination); }},
    {"status", kStatus, read_file_status},
    // The members that may be null.
    {"expires_at", 0, read_file_expiry},
    {"fallback", 0,
     [](Cursor& in, domain::Link& l, std::string&) {
         if (in.null()) {
             l.fallback.reset();
         } else {
             in.string(&l.fallback.emplace());
         }
     }},
    {"max_human_clicks", 0,
     [](Cursor& in, domain::Link& l, std::string&) {
         if (in.null()) {
             l.max_human_clicks.reset();
         } else {
             l.max_human_clicks = in.integer();
         }
     }},
    {"domain", 0,
     [](Cursor& in, domain::Link& l, std::string&) {
         if (!in.null()) in.string(&l.domain);
     }},
    // The flags.
    {"utm_passthrough", 0,
     [](Cursor& in, domain::Link& l, std::string&) { l.utm_passthrough = in.boolean(); }},
    {"auto_fallback", 0,
     [](Cursor& in, domain::Link& l, std::string&) { l.auto_fallback = in.boolean(); }},
    // Automatic fallback's state and the targeting rules.
    {"fallback_branches", 0, read_file_switches},
    {"rules", 0, read_file_rules},
};

const FileLinkField* file_link_field(std::string_view name) {
    for (const auto& field : kFileLinkFields) {
        if (field.name == name) return &field;
    }
    return nullptr;
}

// One link object at the cursor. `key` and `scratch` are strings reused from link to link.
domain::Link read_file_link(Cursor& in, std::string& key, std::string& scratch) {
    if (in.peek() != '{') in.fail("a link is not an object");
    domain::Link link;
    unsigned seen = 0;
    in.each_member(&key, [&] {
        if (const FileLinkField* field = file_link_field(key)) {
            field->read(in, link, scratch);
            seen |= field->required;
        } else {
            in.skip_value();  // not ours: a later version's, or an editor's note
        }
    });
    if (seen != kAllRequired) in.fail("a link lacks slug, partner, destination or status");
    return link;
}

// Reads the links array at the cursor into the builder, one link at a time.
void read_links(Cursor& in, domain::Snapshot::Builder& builder) {
    std::string key;
    std::string scratch;
    in.each_element([&] { builder.add(read_file_link(in, key, scratch)); });
}

// The top-level members of a snapshot file as the first pass finds them: the links array only
// checked, counted and located (the partners may come after it in a file edited by hand), the
// other members' text kept for nlohmann.
struct FileMembers {
    std::optional<std::int64_t> format;
    std::optional<std::uint64_t> version;
    std::optional<std::size_t> links_at;
    std::size_t link_count = 0;
    std::string_view partners;
    std::string_view disclosures;
    std::string_view country_groups;
    std::string_view domains;
};

std::optional<std::int64_t> read_format(Cursor& in) {
    char c = in.peek();
    if (c == '-' || (c >= '0' && c <= '9')) return in.integer();
    in.skip_value();  // not a format this reader knows
    return 0;
}

void locate_links(Cursor& in, FileMembers& members) {
    if (members.links_at) in.fail("links twice");
    if (in.peek() != '[') in.fail("links is not an array");
    members.links_at = in.pos();
    in.each_element([&] {
        in.skip_value(1);
        ++members.link_count;
    });
}

// The first pass over the whole text.
FileMembers scan_file_members(Cursor& in) {
    if (in.peek() != '{') throw std::runtime_error("not a refgate snapshot (format 1)");
    FileMembers members;
    std::string key;
    in.each_member(&key, [&] {
        if (key == "format") {
            members.format = read_format(in);
        } else if (key == "version") {
            members.version = in.unsigned_integer();
        } else if (key == "links") {
            locate_links(in, members);
        } else if (key == "partners") {
            members.partners = in.skip_value();
        } else if (key == "disclosures") {
            members.disclosures = in.skip_value();
        } else if (key == "country_groups") {
            members.country_groups = in.skip_value();
        } else if (key == "domains") {
            members.domains = in.skip_value();
        } else {
            in.skip_value();
        }
    });
    if (!in.at_end()) in.fail("text after the snapshot");
    if (members.format != 1 || !members.links_at)
        throw std::runtime_error("not a refgate snapshot (format 1)");
    if (!members.version) throw std::runtime_error("snapshot file: no version");
    if (members.partners.empty()) throw std::runtime_error("snapshot file: no partners");
    return members;
}

void add_country_groups(domain::Snapshot::Builder& builder, std::string_view text) {
    try {
        builder.country_groups(country_groups_from_json(nlohmann::ordered_json::parse(text)));
    } catch (const std::exception& e) {
        throw std::runtime_error(std::string("snapshot file: ") + e.what());
    }
}

void add_domains(domain::Snapshot::Builder& builder, std::string_view text) {
    std::vector<domain::Domain> domains;
    std::vector<ImportIssue> issues;
    read_domains(nlohmann::ordered_json::parse(text), domains, issues);
    if (!issues.empty())
        throw std::runtime_error("snapshot file: domains: " + issues.front().to_string());
    builder.domains(domains);
}

}  // namespace

std::shared_ptr<const domain::Snapshot> read_snapshot_json(std::string_view text,
                                                           const domain::UrlPolicy& policy) {
    Cursor in(text);
    FileMembers members = scan_file_members(in);
    auto partners = partners_from_json(nlohmann::ordered_json::parse(members.partners));
    // Files written before disclosures were part of the snapshot have none.
    std::vector<domain::Disclosure> disclosures;
    if (!members.disclosures.empty())
        disclosures = disclosures_from_json(nlohmann::ordered_json::parse(members.disclosures));

    domain::Snapshot::Builder builder(
        *members.version, std::move(partners), policy, "file",
        std::chrono::time_point_cast<std::chrono::seconds>(std::chrono::system_clock::now()),
        members.link_count);
    if (!members.country_groups.empty()) add_country_groups(builder, members.country_groups);
    if (!members.domains.empty()) add_domains(builder, members.domains);
    in.seek(*members.links_at);
    read_links(in, builder);
    return builder.finish(std::move(disclosures));
}

std::shared_ptr<const domain::Snapshot> read_snapshot_json(std::istream& in,
                                                           const domain::UrlPolicy& policy) {
    std::string text;
    // Sized once when the stream can tell its length: growing a string of 20 MiB by doubling
    // copied it several times over.
    auto here = in.tellg();
    if (here != std::istream::pos_type(-1) && in.seekg(0, std::ios::end)) {
        auto end = in.tellg();
        in.seekg(here);
        if (end != std::istream::pos_type(-1) && end > here) {
            text.resize(static_cast<std::size_t>(end - here));
            in.read(text.data(), static_cast<std::streamsize>(text.size()));
            text.resize(static_cast<std::size_t>(in.gcount()));
        }
    }
    in.clear(in.rdstate() & std::ios::badbit);
    std::array<char, 1 << 16> buffer{};
    while (in.read(buffer.data(), buffer.size()) || in.gcount() > 0) {
        text.append(buffer.data(), static_cast<std::size_t>(in.gcount()));
    }
    if (in.bad()) throw std::runtime_error("snapshot file: read error");
    return read_snapshot_json(std::string_view(text), policy);
}

std::vector<domain::Partner> partners_from_json(const nlohmann::ordered_json& array) {
    std::vector<domain::Partner> partners;
    for (const auto& j : array) {
        domain::Partner p = partner_from_json(j);
        p.id = j.value("id", std::int64_t{0});
        if (auto codes = j.find("scheduled_codes"); codes != j.end()) {
            for (const auto& s : *codes) {
                auto valid_from = domain::parse_rfc3339(s.at("valid_from").get<std::string>());
                if (!valid_from) throw std::runtime_error("partner " + p.slug + ": bad valid_from");
                domain::ScheduledCode code{*valid_from, s.at("ref_code").get<std::string>(),
                                           std::nullopt};
                if (auto list = s.find("channel_codes"); list != s.end() && list->is_array()) {
                    code.channel_codes.emplace();
                    for (const auto& c : *list)
                        code.channel_codes->push_back({c.at("channel").get<std::string>(),
                                                       c.at("ref_code").get<std::string>()});
                }
                p.scheduled_codes.push_back(std::move(code));
            }
        }
        partners.push_back(std::move(p));
    }
    return partners;
}

}  // namespace refgate::codec
