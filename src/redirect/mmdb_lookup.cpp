#include "mmdb_lookup.hpp"

#include <netinet/in.h>

#include <cstring>
#include <stdexcept>
#include <string>

namespace refgate {

MMDB_lookup_result_s mmdb_lookup(const MMDB_s& db, const IpBytes& address) noexcept {
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

std::string mmdb_describe(const MMDB_s& db) {
    std::string out = db.metadata.database_type != nullptr ? db.metadata.database_type : "";
    for (std::size_t i = 0; i < db.metadata.description.count; ++i) {
        const auto* d = db.metadata.description.descriptions[i];
        if (d != nullptr && d->description != nullptr) out += std::string(": ") + d->description;
    }
    return out;
}

}  // namespace refgate
