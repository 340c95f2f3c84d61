#include "refgate/domain/agent_regex.hpp"

#include <algorithm>
#include <bitset>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "refgate/domain/ascii.hpp"

namespace refgate::domain {
namespace {

using ByteSet = std::bitset<256>;

// A class of more bytes than this (after lower-casing) is kept as a gap, like `.`: expanding
// `\d` in every place would multiply the literals for little gain in precision.
constexpr std::size_t kMaxClassBytes = 4;
// Bounds the alternatives one pattern can expand into while it is parsed.
constexpr std::size_t kMaxSequences = 256;

using ascii::to_lower;

struct Element {
    enum class Kind { bytes, start, end, gap } kind = Kind::bytes;
    ByteSet bytes;
};
using Kind = Element::Kind;
using Sequence = std::vector<Element>;
using Alternatives = std::vector<Sequence>;

[[noreturn]] void fail(const std::string& why) { throw std::invalid_argument(why); }

Element of_kind(Kind kind) { return Element{kind, {}}; }

Element of_bytes(const ByteSet& bytes) {
    if (bytes.count() > kMaxClassBytes) return of_kind(Kind::gap);
    return Element{Kind::bytes, bytes};
}

Element of_byte(char c) {
    ByteSet bytes;
    bytes.set(static_cast<unsigned char>(to_lower(c)));
    return Element{Kind::bytes, bytes};
}

Alternatives single(Element element) { return {Sequence{std::move(element)}}; }

Alternatives concatenate(const Alternatives& heads, const Alternatives& tails) {
    if (heads.size() * tails.size() > kMaxSequences) fail("too many alternatives");
    Alternatives result;
    for (const Sequence& head : heads) {
        for (const Sequence& tail : tails) {
            Sequence joined = head;
            joined.insert(joined.end(), tail.begin(), tail.end());
            result.push_back(std::move(joined));
        }
    }
    return result;
}

// `\d`, `\s`, ... as a set; nullopt-like `wide` for the classes that are kept as gaps.
struct EscapeClass {
    ByteSet bytes;
    bool wide = false;
};

EscapeClass escape_class(char c) {
    EscapeClass result;
    switch (c) {
        case 'd':
            for (char d = '0'; d <= '9'; ++d) result.bytes.set(static_cast<unsigned char>(d));
            return result;
        case 's':  // a User-Agent holds no line breaks
            result.bytes.set(' ');
            result.bytes.set('\t');
            return result;
        case 'S':
        case 'D':
        case 'w':
        case 'W':
            result.wide = true;
            return result;
        case 't':
            result.bytes.set('\t');
            return result;
        case 'b':
        case 'B':
            fail("a word boundary (\\b, \\B)");
        default:
            break;
    }
    if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
        fail(std::string("the escape \\") + c);
    }
    result.bytes.set(static_cast<unsigned char>(to_lower(c)));
    return result;
}

class Parser {
  public:
    explicit Parser(std::string_view regex) : regex_(regex) {}

    Alternatives parse() {
        Alternatives result = alternation();
        if (!at_end()) fail("an unbalanced ')'");
        return result;
    }

  private:
    bool at_end() const { return pos_ >= regex_.size(); }
    char peek() const { return regex_[pos_]; }

    Alternatives alternation() {
        Alternatives result = sequence();
        while (!at_end() && peek() == '|') {
            ++pos_;
            Alternatives more = sequence();
            result.insert(result.end(), more.begin(), more.end());
            if (result.size() > kMaxSequences) fail("too many alternatives");
        }
        return result;
    }

    Alternatives sequence() {
        Alternatives result{Sequence{}};
        while (!at_end() && peek() != '|' && peek() != ')') {
            Alternatives item = quantified(atom());
            if (item.size() == 1) {
                // Most items are one character: appended in place rather than copying every
                // sequence so far (which made the built-in patterns cost 15 MB of copies).
                for (Sequence& s : result) s.insert(s.end(), item[0].begin(), item[0].end());
            } else {
                result = concatenate(result, item);
            }
        }
        return result;
    }

    Alternatives atom() {
        const char c = regex_[pos_++];
        switch (c) {
            case '(':
                return group();
            case '[':
                return single(bracket());
            case '.':
                return single(of_kind(Kind::gap));
            case '^':
                return single(of_kind(Kind::start));
            case '$':
                return single(of_kind(Kind::end));
            case '\\': {
                if (at_end()) fail("a '\\' at the end");
                EscapeClass e = escape_class(regex_[pos_++]);
                return single(e.wide ? of_kind(Kind::gap) : of_bytes(e.bytes));
            }
            case '*':
            case '+':
            case '?':
            case '{':
                fail(std::string("a '") + c + "' with nothing to repeat");
            default:
                return single(of_byte(c));
        }
    }

    Alternatives group() {
        if (!at_end() && peek() == '?') {
            if (regex_.substr(pos_, 2) != "?:") fail("a look-around or a group with options");
            pos_ += 2;
        }
        Alternatives inner = alternation();
        if (at_end() || peek() != ')') fail("a '(' without ')'");
        ++pos_;
        return inner;
    }

    Element bracket() {
        bool negated = !at_end() && peek() == '^';
        if (negated) ++pos_;
        ByteSet bytes;
        bool wide = negated;
        bool first = true;
        while (true) {
            if (at_end()) fail("a '[' without ']'");
            char c = regex_[pos_++];
            if (c == ']' && !first) break;
            first = false;
            if (c == '\\') {
                if (at_end()) fail("a '\\' at the end");
                EscapeClass e = escape_class(regex_[pos_++]);
                bytes |= e.bytes;
                wide = wide || e.wide;
                continue;
            }
            if (pos_ + 1 < regex_.size() && peek() == '-' && regex_[pos_ + 1] != ']') {
                const char last = regex_[pos_ + 1];
                pos_ += 2;
                if (last < c) fail("a reversed range in a class");
                for (int b = static_cast<unsigned char>(c); b <= static_cast<unsigned char>(last);
                     ++b) {
                    bytes.set(static_cast<unsigned char>(to_lower(static_cast<char>(b))));
                }
                continue;
            }
            bytes.set(static_cast<unsigned char>(to_lower(c)));
        }
        return wide ? of_kind(Kind::gap) : of_bytes(bytes);
    }

    Alternatives quantified(Alternatives item) {
        if (at_end()) return item;
        const char q = peek();
        if (q == '{') fail("a counted repetition");
        if (q != '?' && q != '*' && q != '+') return item;
        ++pos_;
        if (!at_end() && peek() == '?') ++pos_;  // a lazy quantifier matches the same texts
        if (q == '?') {
            item.push_back(Sequence{});
            return item;
        }
        // `x*` and `x+` repeat without bound: the repetition is a gap (x+ = x, then a gap).
        Alternatives gap = single(of_kind(Kind::gap));
        return q == '*' ? gap : concatenate(item, gap);
    }

    std::string_view regex_;
    std::size_t pos_ = 0;
};

void check_anchors(const Sequence& sequence) {
    for (std::size_t i = 0; i < sequence.size(); ++i) {
        if (sequence[i].kind == Kind::start && i != 0) fail("a '^' after the start");
        if (sequence[i].kind == Kind::end && i + 1 != sequence.size()) fail("a '$' before the end");
    }
}

// The literals of one alternative: its longest run of bytes, expanded.
void add_literals(const Sequence& sequence, std::vector<AgentLiteral>& out) {
    check_anchors(sequence);
    std::size_t best_begin = 0;
    std::size_t best_end = 0;
    for (std::size_t i = 0; i < sequence.size();) {
        if (sequence[i].kind != Kind::bytes) {
            ++i;
            continue;
        }
        std::size_t j = i;
        while (j < sequence.size() && sequence[j].kind == Kind::bytes) ++j;
        if (j - i > best_end - best_begin) {
            best_begin = i;
            best_end = j;
        }
        i = j;
    }
    if (best_end - best_begin < kMinAgentLiteralBytes) {
        fail("no fixed text of " + std::to_string(kMinAgentLiteralBytes) + " bytes or more");
    }
    const bool at_start = best_begin == 1 && sequence.front().kind == Kind::start;
    const bool at_end = best_end + 1 == sequence.size() && sequence.back().kind == Kind::end;

    std::vector<std::string> texts{std::string{}};
    for (std::size_t i = best_begin; i < best_end; ++i) {
        const ByteSet& bytes = sequence[i].bytes;
        if (texts.size() * bytes.count() > kMaxAgentLiterals) fail("too many literals");
        std::vector<std::string> longer;
        for (const std::string& text : texts) {
            for (int b = 0; b < 256; ++b) {
                if (bytes.test(static_cast<std::size_t>(b))) {
                    longer.push_back(text + static_cast<char>(b));
                }
            }
        }
        texts = std::move(longer);
    }
    for (std::string& text : texts) out.push_back({std::move(text), at_start, at_end});
}

}  // namespace

std::vector<AgentLiteral> agent_regex_literals(std::string_view regex) {
    if (regex.empty()) fail("an empty pattern");
    std::vector<AgentLiteral> literals;
    for (const Sequence& sequence : Parser{regex}.parse()) add_literals(sequence, literals);
    const auto key = [](const AgentLiteral& l) { return std::tie(l.lower, l.at_start, l.at_end); };
    std::sort(literals.begin(), literals.end(),
              [&](const AgentLiteral& a, const AgentLiteral& b) { return key(a) < key(b); });
    literals.erase(std::unique(literals.begin(), literals.end()), literals.end());
    if (literals.size() > kMaxAgentLiterals) fail("too many literals");
    return literals;
}

}  // namespace refgate::domain
