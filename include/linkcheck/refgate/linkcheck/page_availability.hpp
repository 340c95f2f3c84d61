#pragma once

// What a product page states of its availability, read from the body the checker fetched.

#include <optional>
#include <string>
#include <string_view>

namespace refgate::linkcheck {

// The schema.org availability a page states (JSON-LD or microdata) when it is OutOfStock,
// Discontinued or SoldOut; nullopt otherwise.
std::optional<std::string> unavailable_marker(std::string_view html);

}  // namespace refgate::linkcheck
