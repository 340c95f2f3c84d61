#include "random_hex.hpp"

#include <openssl/rand.h>

#include <stdexcept>
#include <vector>

namespace refgate::clicks {

std::string random_hex(std::size_t bytes) {
    std::vector<unsigned char> buf(bytes);
    if (RAND_bytes(buf.data(), static_cast<int>(buf.size())) != 1)
        throw std::runtime_error("RAND_bytes failed");
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    for (unsigned char c : buf) {
        out.push_back(kHex[c >> 4]);
        out.push_back(kHex[c & 0xf]);
    }
    return out;
}

}  // namespace refgate::clicks
