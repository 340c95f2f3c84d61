#include "refgate/tools/mmdb_writer.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <stdexcept>
#include <utility>

namespace refgate::tools {
namespace {

using U128 = unsigned __int128;

// MMDB data types (the spec's numbers).
enum Type : int {
    kPointer = 1,
    kString = 2,
    kUint16 = 5,
    kUint32 = 6,
    kMap = 7,
    kUint64 = 9,
    kArray = 11
};

constexpr std::string_view kAsnKey = "autonomous_system_number";
constexpr std::string_view kOrganizationKey = "autonomous_system_organization";
constexpr std::string_view kMetadataMarker = "\xAB\xCD\xEFMaxMind.com";
constexpr std::size_t kDataSeparator = 16;  // zero bytes between the tree and the data

U128 to_u128(const domain::IpBytes& bytes) {
    U128 value = 0;
    for (auto b : bytes) value = (value << 8) | b;
    return value;
}

bool is_mapped_v4(const domain::IpBytes& bytes) {
    for (int i = 0; i < 10; ++i)
        if (bytes[i] != 0) return false;
    return bytes[10] == 0xff && bytes[11] == 0xff;
}

void put_control(std::string& out, int type, std::size_t size) {
    std::string extra;
    int bits = 0;
    if (size < 29) {
        bits = static_cast<int>(size);
    } else if (size < 29 + 256) {
        bits = 29;
        extra.push_back(static_cast<char>(size - 29));
    } else if (size < 285 + 65'536) {
        bits = 30;
        extra.push_back(static_cast<char>((size - 285) >> 8));
        extra.push_back(static_cast<char>((size - 285) & 0xff));
    } else {
        bits = 31;
        std::size_t rest = size - 65'821;
        for (int shift = 16; shift >= 0; shift -= 8)
            extra.push_back(static_cast<char>((rest >> shift) & 0xff));
    }
    if (type <= 7) {
        out.push_back(static_cast<char>((type << 5) | bits));
    } else {
        out.push_back(static_cast<char>(bits));
        out.push_back(static_cast<char>(type - 7));
    }
    out += extra;
}

void put_string(std::string& out, std::string_view text) {
    put_control(out, kString, text.size());
    out += text;
}

void put_uint(std::string& out, int type, std::uint64_t value) {
    std::size_t bytes = 0;
    for (std::uint64_t v = value; v != 0; v >>= 8) ++bytes;
    put_control(out, type, bytes);
    for (std::size_t i = bytes; i-- > 0;)
        out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

// A pointer to `offset` in the data section, in its shortest form.
void put_pointer(std::string& out, std::uint32_t offset) {
    if (offset < 2'048) {
        out.push_back(static_cast<char>(0x20 | (offset >> 8)));
        out.push_back(static_cast<char>(offset & 0xff));
        return;
    }
    out.push_back(static_cast<char>(0x38));
    for (int shift = 24; shift >= 0; shift -= 8)
        out.push_back(static_cast<char>((offset >> shift) & 0xff));
}

// The search tree while it is built: per node, two records, each empty, a node or a datum.
class Tree {
  public:
    static constexpr std::uint32_t kEmpty = std::numeric_limits<std::uint32_t>::max();
    static constexpr std::uint32_t kDatum = 0x8000'0000;  // | index of the datum

    Tree() : nodes_(1, {kEmpty, kEmpty}) {}

    // The network `base`/`prefix` (bits from the top of the 128) maps to `datum`.
    void insert(U128 base, int prefix, std::uint32_t datum) {
        std::uint32_t node = 0;
        for (int depth = 0; depth < prefix; ++depth) {
            int bit = static_cast<int>((base >> (127 - depth)) & 1);
            if (depth == prefix - 1) {
                nodes_[node][bit] = kDatum | datum;
                return;
            }
            node = child(node, bit);
        }
    }

    // The node reached by the first `depth` bits of `base`, made where missing.
    std::uint32_t walk(U128 base, int depth) {
        std::uint32_t node = 0;
        for (int i = 0; i < depth; ++i)
            node = child(node, static_cast<int>((base >> (127 - i)) & 1));
        return node;
    }
    void link(std::uint32_t node, int bit, std::uint32_t target) { nodes_[node][bit] = target; }

    const std::vector<std::array<std::uint32_t, 2>>& nodes() const { return nodes_; }

  private:
    std::uint32_t child(std::uint32_t node, int bit) {
        std::uint32_t record = nodes_[node][bit];
        if (record != kEmpty && (record & kDatum) == 0) return record;
        // A datum on the way covers this network too: the new node's halves keep it.
        auto index = static_cast<std::uint32_t>(nodes_.size());
        nodes_.push_back({record, record});
        nodes_[node][bit] = index;
        return index;
    }
    std::vector<std::array<std::uint32_t, 2>> nodes_;
};

// Calls insert for each CIDR block of [first, last].
template <typename Insert>
void for_each_block(U128 first, U128 last, Insert&& insert) {
    for (;;) {
        int size = 0;  // host bits of the largest aligned block at `first` within the range
        while (size < 128 && ((first >> size) & 1) == 0) {
            U128 end = first + ((static_cast<U128>(2) << size) - 1);
            if (end < first || end > last) break;
            ++size;
        }
        insert(first, 128 - size);
        U128 end =
            size == 128 ? ~static_cast<U128>(0) : first + ((static_cast<U128>(1) << size) - 1);
        if (end >= last) return;
        first = end + 1;
    }
}

void put_tree(std::string& out, const Tree& tree, std::uint32_t node_count,
              const std::vector<std::uint32_t>& datum_offsets, int record_size) {
    auto value = [&](std::uint32_t record) -> std::uint64_t {
        if (record == Tree::kEmpty) return node_count;
        if ((record & Tree::kDatum) == 0) return record;
        return std::uint64_t{node_count} + kDataSeparator + datum_offsets[record & ~Tree::kDatum];
    };
    for (const auto& node : tree.nodes()) {
        std::uint64_t left = value(node[0]), right = value(node[1]);
        auto put = [&](std::uint64_t v, int bytes) {
            for (int i = bytes - 1; i >= 0; --i)
                out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
        };
        if (record_size == 28) {
            put(left & 0xffffff, 3);
            out.push_back(static_cast<char>(((left >> 20) & 0xf0) | ((right >> 24) & 0x0f)));
            put(right & 0xffffff, 3);
        } else {
            put(left, record_size / 8);
            put(right, record_size / 8);
        }
    }
}

void put_metadata(std::string& out, std::uint32_t node_count, int record_size,
                  std::uint64_t build_epoch, std::string_view type, std::string_view description) {
    out += kMetadataMarker;
    put_control(out, kMap, 9);
    put_string(out, "binary_format_major_version");
    put_uint(out, kUint16, 2);
    put_string(out, "binary_format_minor_version");
    put_uint(out, kUint16, 0);
    put_string(out, "build_epoch");
    put_uint(out, kUint64, build_epoch);
    put_string(out, "database_type");
    put_string(out, type);
    put_string(out, "description");
    put_control(out, kMap, 1);
    put_string(out, "en");
    put_string(out, description);
    put_string(out, "ip_version");
    put_uint(out, kUint16, 6);
    put_string(out, "languages");
    put_control(out, kArray, 1);
    put_string(out, "en");
    put_string(out, "node_count");
    put_uint(out, kUint32, node_count);
    put_string(out, "record_size");
    put_uint(out, kUint16, static_cast<std::uint64_t>(record_size));
}

struct TreeRange {
    U128 first;
    U128 last;
    std::uint32_t datum;
};

// The tree over `ranges`, the data section and the metadata: the database's bytes.
std::string assemble(const std::vector<TreeRange>& ranges, const std::string& data,
                     const std::vector<std::uint32_t>& datum_offsets, std::uint64_t build_epoch,
                     std::string_view type, std::string_view description) {
    Tree tree;
    bool any_v4 = false;
    for (const auto& range : ranges) {
        any_v4 = any_v4 || range.last <= 0xffff'ffff;
        const std::uint32_t datum = range.datum;
        for_each_block(range.first, range.last,
                       [&](U128 base, int prefix) { tree.insert(base, prefix, datum); });
    }
    if (any_v4) {  // ::ffff:a.b.c.d finds the IPv4 subtree too
        std::uint32_t v4 = tree.walk(0, 96);
        std::uint32_t mapped = tree.walk(static_cast<U128>(0xffff) << 32, 95);
        tree.link(mapped, 1, v4);
    }
    auto node_count = static_cast<std::uint32_t>(tree.nodes().size());
    std::uint64_t largest = std::uint64_t{node_count} + kDataSeparator + data.size();
    int record_size = largest < (1ULL << 24) ? 24 : largest < (1ULL << 28) ? 28 : 32;
    std::string out;
    out.reserve(tree.nodes().size() * static_cast<std::size_t>(record_size) / 4 + data.size() +
                512);
    put_tree(out, tree, node_count, datum_offsets, record_size);
    out.append(kDataSeparator, '\0');
    out += data;
    put_metadata(out, node_count, record_size, build_epoch, type, description);
    return out;
}

}  // namespace

std::pair<unsigned __int128, unsigned __int128> range_bounds(const domain::IpBytes& first,
                                                             const domain::IpBytes& last) {
    bool v4 = is_mapped_v4(first);
    if (v4 != is_mapped_v4(last))
        throw std::invalid_argument("an address range mixes IPv4 and IPv6");
    U128 a = to_u128(first), b = to_u128(last);
    if (a > b) throw std::invalid_argument("an address range ends before it starts");
    if (v4) {  // MaxMind's IPv4 subtree is ::/96; ::ffff:0:0/96 is aliased to it in assemble()
        a &= 0xffff'ffff;
        b &= 0xffff'ffff;
    }
    return {a, b};
}

void MmdbAsnWriter::add(const domain::IpBytes& first, const domain::IpBytes& last,
                        std::uint32_t asn, std::string_view organization) {
    auto [a, b] = range_bounds(first, last);
    ranges_.push_back({a, b, asn, std::string(organization)});
}

std::string MmdbAsnWriter::finish(std::uint64_t build_epoch, std::string_view description) const {
    // The data section: the two keys once, then one map per (ASN, organisation).
    std::string data;
    put_string(data, kAsnKey);
    auto organization_key = static_cast<std::uint32_t>(data.size());
    put_string(data, kOrganizationKey);
    std::map<std::pair<std::uint32_t, std::string_view>, std::uint32_t> datum_of;
    std::vector<std::uint32_t> datum_offsets;
    std::vector<TreeRange> tree_ranges;
    for (const auto& range : ranges_) {
        auto [it, added] = datum_of.try_emplace({range.asn, range.organization},
                                                static_cast<std::uint32_t>(datum_offsets.size()));
        if (added) {
            datum_offsets.push_back(static_cast<std::uint32_t>(data.size()));
            put_control(data, kMap, 2);
            put_pointer(data, 0);
            put_uint(data, kUint32, range.asn);
            put_pointer(data, organization_key);
            put_string(data, range.organization);
        }
        tree_ranges.push_back({range.first, range.last, it->second});
    }
    return assemble(tree_ranges, data, datum_offsets, build_epoch, "refgate-ASN", description);
}

void MmdbCountryWriter::add(const domain::IpBytes& first, const domain::IpBytes& last,
                            std::string_view country) {
    if (country.size() != 2) throw std::invalid_argument("a country code has two letters");
    ranges_.push_back({range_bounds(first, last), std::string(country)});
}

std::string MmdbCountryWriter::finish(std::uint64_t build_epoch,
                                      std::string_view description) const {
    // GeoLite2-Country's shape, {"country": {"iso_code": "DE"}}: either database serves.
    std::string data;
    put_string(data, "country");
    auto iso_key = static_cast<std::uint32_t>(data.size());
    put_string(data, "iso_code");
    std::map<std::string_view, std::uint32_t> datum_of;
    std::vector<std::uint32_t> datum_offsets;
    std::vector<TreeRange> tree_ranges;
    for (const auto& range : ranges_) {
        auto [it, added] =
            datum_of.try_emplace(range.country, static_cast<std::uint32_t>(datum_offsets.size()));
        if (added) {
            datum_offsets.push_back(static_cast<std::uint32_t>(data.size()));
            put_control(data, kMap, 1);
            put_pointer(data, 0);
            put_control(data, kMap, 1);
            put_pointer(data, iso_key);
            put_string(data, range.country);
        }
        tree_ranges.push_back({range.bounds.first, range.bounds.second, it->second});
    }
    return assemble(tree_ranges, data, datum_offsets, build_epoch, "refgate-Country", description);
}

}  // namespace refgate::tools
