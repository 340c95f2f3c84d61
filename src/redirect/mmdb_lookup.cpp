#include "mmdb_lookup.hpp"

#include <netinet/in.h>

#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace refgate::redirect {

MMDB_lookup_result_s mmdb_lookup(const MMDB_s& db, const domain::IpBytes& address) noexcept {
    sockaddr_in v4{};
    sockaddr_in6 v6{};
    const sockaddr* socket_address = nullptr;
    static constexpr std::uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (std::memcmp(address.data(), kMapped, sizeof kMapped) == 0) {
        v4.sin_family = AF_INET;
        std::memcpy(&v4.sin_addr, address.data() + 12, 4);
        socket_address = reinterpret_cast<const sockaddr*>(&v4);
    } else {
        v6.sin6_family = AF_INET6;
        std::memcpy(&v6.sin6_addr, address.data(), 16);
        socket_address = reinterpret_cast<const sockaddr*>(&v6);
    }
    int error = MMDB_SUCCESS;
    MMDB_lookup_result_s result = MMDB_lookup_sockaddr(&db, socket_address, &error);
    if (error != MMDB_SUCCESS) result.found_entry = false;
    return result;
}

void mmdb_open(const std::string& path, const char* what, MMDB_s& db) {
    int status = MMDB_open(path.c_str(), MMDB_MODE_MMAP, &db);
    if (status != MMDB_SUCCESS) {
        throw std::runtime_error(std::string("the ") + what + " " + path +
                                 " cannot be opened: " + MMDB_strerror(status));
    }
}

namespace {

struct Pending {
    std::uint32_t node;
    int depth;  // bits of prefix fixed
    domain::Address128 prefix;
};

// Pushes a search node (unless `enter` says no), reports a data record; false for an invalid
// record.
bool visit(std::uint8_t type, std::uint64_t value, MMDB_entry_s entry, Pending child,
           std::vector<Pending>& stack, const MmdbLeaf& leaf, const MmdbEnter& enter) {
    if (type == MMDB_RECORD_TYPE_SEARCH_NODE) {
        if (enter && !enter(child.prefix, child.depth)) return true;
        child.node = static_cast<std::uint32_t>(value);
        stack.push_back(child);
    } else if (type == MMDB_RECORD_TYPE_DATA) {
        domain::Address128 span = child.depth == 0
                                      ? ~domain::Address128{0}
                                      : (domain::Address128{1} << (128 - child.depth)) - 1;
        leaf(child.prefix, child.prefix | span, entry);
    }
    return type != MMDB_RECORD_TYPE_INVALID;
}

}  // namespace

bool mmdb_walk(const MMDB_s& db, std::stop_token stop, const MmdbLeaf& leaf,
               const MmdbEnter& enter) {
    int root_depth = db.metadata.ip_version == 4 ? 96 : 0;
    std::vector<Pending> stack{{0, root_depth, 0}};
    std::uint64_t visits = 0;
    // Aliases (::ffff:0:0/96, 2002::/16) reach the IPv4 subtree again; more visits than that
    // means a cycle.
    const std::uint64_t limit = 4ull * db.metadata.node_count + 16;
    while (!stack.empty()) {
        if ((visits++ & 0xffff) == 0 && stop.stop_requested()) return false;
        if (visits > limit) return false;
        Pending at = stack.back();
        stack.pop_back();
        MMDB_search_node_s node{};
        if (at.depth >= 128 || MMDB_read_node(&db, at.node, &node) != MMDB_SUCCESS) return false;
        domain::Address128 right_bit = domain::Address128{1} << (127 - at.depth);
        if (!visit(node.left_record_type, node.left_record, node.left_record_entry,
                   {at.node, at.depth + 1, at.prefix}, stack, leaf, enter) ||
            !visit(node.right_record_type, node.right_record, node.right_record_entry,
                   {at.node, at.depth + 1, at.prefix | right_bit}, stack, leaf, enter))
            return false;
    }
    return true;
}

std::optional<std::uint64_t> mmdb_node_at(const MMDB_s& db, domain::Address128 prefix, int depth) {
    std::uint64_t node = 0;
    for (int d = db.metadata.ip_version == 4 ? 96 : 0; d < depth; ++d) {
        MMDB_search_node_s read{};
        if (d >= 128 ||
            MMDB_read_node(&db, static_cast<std::uint32_t>(node), &read) != MMDB_SUCCESS)
            return std::nullopt;
        bool right = ((prefix >> (127 - d)) & 1) != 0;
        if ((right ? read.right_record_type : read.left_record_type) !=
            MMDB_RECORD_TYPE_SEARCH_NODE)
            return std::nullopt;
        node = right ? read.right_record : read.left_record;
    }
    return node;
}

std::string mmdb_describe(const MMDB_s& db) {
    std::string out = db.metadata.database_type != nullptr ? db.metadata.database_type : "";
    for (std::size_t i = 0; i < db.metadata.description.count; ++i) {
        const auto* d = db.metadata.description.descriptions[i];
        if (d != nullptr && d->description != nullptr) out += std::string(": ") + d->description;
    }
    return out;
}

}  // namespace refgate::redirect
