#include "refgate/domain/range_file.hpp"

#include <cstring>

namespace refgate::domain {
namespace {

constexpr std::size_t kIndexBytes = RangeColumn<std::uint32_t, std::uint8_t>::kIndexSize * 4;
// More ranges than any address database has; keeps the size arithmetic far from overflowing.
constexpr std::uint32_t kMaxRanges = std::uint32_t{1} << 28;

constexpr std::size_t aligned16(std::size_t n) { return (n + 15) & ~std::size_t{15}; }

template <typename T>
std::span<const T> section(std::span<const std::byte> bytes, std::size_t offset, std::size_t n) {
    // The offsets are multiples of 16 and the bytes start 16-byte aligned (checked).
    return {reinterpret_cast<const T*>(bytes.data() + offset), n};
}

// Starts at 0, strictly increasing; each index entry names the range holding its prefix's first
// address.
template <typename T, typename V>
bool column_ok(const RangeColumn<T, V>& column, const char* family, std::string& error) {
    const auto& starts = column.starts;
    if (starts.empty() || starts[0] != 0) {
        error = std::string("the ") + family + " ranges do not start at address 0";
        return false;
    }
    for (std::size_t i = 1; i < starts.size(); ++i) {
        if (!(starts[i - 1] < starts[i])) {
            error = std::string("the ") + family + " ranges are not sorted (range " +
                    std::to_string(i) + ")";
            return false;
        }
    }
    for (std::size_t prefix = 0; prefix < column.index.size(); ++prefix) {
        T first = static_cast<T>(static_cast<T>(prefix) << RangeColumn<T, V>::kShift);
        std::size_t range = column.index[prefix];
        if (range >= starts.size() || starts[range] > first ||
            (range + 1 < starts.size() && starts[range + 1] <= first)) {
            error = std::string("the ") + family + " prefix index is wrong at prefix " +
                    std::to_string(prefix);
            return false;
        }
    }
    return true;
}

template <typename V>
std::optional<RangeFileContents<V>> read(std::span<const std::byte> bytes, RangeFileKind kind,
                                         std::string& error) {
    RangeFileContents<V> out{};
    if (bytes.size() < sizeof(RangeFileHeader)) {
        error = "shorter than the header (" + std::to_string(bytes.size()) + " bytes)";
        return std::nullopt;
    }
    if (reinterpret_cast<std::uintptr_t>(bytes.data()) % 16 != 0) {
        error = "not 16-byte aligned in memory";
        return std::nullopt;
    }
    RangeFileHeader& h = out.header;
    std::memcpy(&h, bytes.data(), sizeof h);
    if (std::memcmp(h.magic, kRangeFileMagic, sizeof h.magic) != 0) {
        error = "not a refgate range file (wrong magic)";
        return std::nullopt;
    }
    if (h.version != kRangeFileVersion) {
        error = "format version " + std::to_string(h.version) + ", this refgate reads " +
                std::to_string(kRangeFileVersion);
        return std::nullopt;
    }
    if (h.kind != static_cast<std::uint32_t>(kind) || h.value_size != sizeof(V)) {
        error = "ranges of another kind (" + std::to_string(h.kind) + ", values of " +
                std::to_string(h.value_size) + " bytes)";
        return std::nullopt;
    }
    static constexpr std::uint8_t kZero[sizeof h.reserved] = {};
    if ((h.flags & ~(kRangeFileIpv4Compatible | kRangeFileSixToFour)) != 0 ||
        std::memcmp(h.reserved, kZero, sizeof kZero) != 0) {
        error = "unknown flags";
        return std::nullopt;
    }
    if (h.v4_count == 0 || h.v6_count == 0 || h.v4_count > kMaxRanges || h.v6_count > kMaxRanges) {
        error = "range counts out of bounds";
        return std::nullopt;
    }
    auto layout = RangeFileLayout::of(h.v4_count, h.v6_count, sizeof(V));
    if (bytes.size() != layout.size) {
        error = std::to_string(bytes.size()) + " bytes where the header says " +
                std::to_string(layout.size) + " (truncated or padded)";
        return std::nullopt;
    }
    constexpr std::size_t kIndex = RangeColumn<std::uint32_t, V>::kIndexSize;
    out.tables.v4 = {section<std::uint32_t>(bytes, layout.v4_starts, h.v4_count),
                     section<V>(bytes, layout.v4_values, h.v4_count),
                     section<std::uint32_t>(bytes, layout.v4_index, kIndex)};
    out.tables.v6 = {section<Address128>(bytes, layout.v6_starts, h.v6_count),
                     section<V>(bytes, layout.v6_values, h.v6_count),
                     section<std::uint32_t>(bytes, layout.v6_index, kIndex)};
    out.tables.ipv4_compatible = (h.flags & kRangeFileIpv4Compatible) != 0;
    out.tables.six_to_four = (h.flags & kRangeFileSixToFour) != 0;
    if (!column_ok(out.tables.v4, "IPv4", error) || !column_ok(out.tables.v6, "IPv6", error))
        return std::nullopt;
    return out;
}

}  // namespace

RangeFileLayout RangeFileLayout::of(std::size_t v4_count, std::size_t v6_count,
                                    std::size_t value_size) {
    RangeFileLayout l{};
    l.v4_index = sizeof(RangeFileHeader);
    l.v6_index = l.v4_index + kIndexBytes;
    l.v4_starts = l.v6_index + kIndexBytes;
    l.v4_values = aligned16(l.v4_starts + v4_count * 4);
    l.v6_starts = aligned16(l.v4_values + v4_count * value_size);
    l.v6_values = l.v6_starts + v6_count * 16;
    l.size = aligned16(l.v6_values + v6_count * value_size);
    return l;
}

std::optional<RangeFileContents<std::uint16_t>> read_country_range_file(
    std::span<const std::byte> bytes, std::string& error) {
    return read<std::uint16_t>(bytes, RangeFileKind::country, error);
}

std::optional<RangeFileContents<std::uint32_t>> read_asn_range_file(
    std::span<const std::byte> bytes, std::string& error) {
    return read<std::uint32_t>(bytes, RangeFileKind::asn, error);
}

}  // namespace refgate::domain
