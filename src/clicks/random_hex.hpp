#pragma once

#include <cstddef>
#include <string>

namespace refgate::clicks {

// `bytes` random bytes (OpenSSL's generator) as lower-case hex: batch ids' instance part, salts.
std::string random_hex(std::size_t bytes);

}  // namespace refgate::clicks
