#include "fault_points.hpp"

#ifdef REFGATE_FAULT_POINTS
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <string_view>

#include "refgate/runtime/log.hpp"

namespace refgate::clicks {

void fault_point(const char* name) {
    static const char* configured = std::getenv("REFGATE_FAULT_POINT");
    if (configured != nullptr && std::string_view(configured) == name) {
        runtime::log::warn("fault_point", {{"name", name}});
        ::kill(::getpid(), SIGKILL);
    }
}

}  // namespace refgate::clicks
#endif
