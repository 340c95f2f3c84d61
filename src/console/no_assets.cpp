#include "refgate/console/console_handler.hpp"

// A build configured with -DREFGATE_CONSOLE=OFF embeds nothing, and the app mounts no console.
namespace refgate::console {

std::span<const Asset> embedded_assets() { return {}; }

}  // namespace refgate::console
