#pragma once

#include <string>

#include "refgate/config/config.hpp"

namespace refgate::app {

// `refgate check-links`: checks the active links (all, one slug, or one partner's) now, stores
// the outcome and prints each finding with its chain. Exit 0 when it checked, whatever it found.
int check_links(const config::Config& config, const std::string& slug, const std::string& partner,
                const std::string& version);

}  // namespace refgate::app
