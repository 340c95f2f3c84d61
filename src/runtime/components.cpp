#include "refgate/runtime/components.hpp"

namespace refgate::runtime {

Components::~Components() { stop(); }

void Components::add(std::string name, Start start, Stop stop) {
    components_.push_back({std::move(name), std::move(start), std::move(stop)});
}

bool Components::start() {
    while (started_ < components_.size()) {
        if (!components_[started_].start()) {
            stop();
            return false;
        }
        ++started_;
    }
    return true;
}

void Components::stop() {
    while (started_ > 0) {
        --started_;
        components_[started_].stop();
    }
}

std::vector<std::string> Components::names() const {
    std::vector<std::string> names;
    for (const auto& c : components_) names.push_back(c.name);
    return names;
}

}  // namespace refgate::runtime
