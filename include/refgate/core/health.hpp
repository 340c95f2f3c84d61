#pragma once

#include <atomic>
#include <string_view>

namespace refgate {

enum class DependencyState { unknown, up, down };

inline std::string_view to_string(DependencyState state) {
    switch (state) {
        case DependencyState::up:
            return "up";
        case DependencyState::down:
            return "down";
        default:
            return "unknown";
    }
}

// What the background workers last saw of PostgreSQL and Redis; read by /readyz.
struct HealthState {
    std::atomic<DependencyState> postgres{DependencyState::unknown};
    std::atomic<DependencyState> redis{DependencyState::unknown};
};

}  // namespace refgate
