#include "refgate/runtime/components.hpp"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace components_test {

namespace {

using refgate::runtime::Components;

// Adds a component that records its start and stop in `events`.
void add(Components& components, std::vector<std::string>& events, std::string name,
         bool starts = true) {
    components.add(
        name,
        [&events, name, starts] {
            events.push_back("start " + name);
            return starts;
        },
        [&events, name] { events.push_back("stop " + name); });
}

}  // namespace

TEST_CASE("components start in order and stop in reverse", "[components]") {
    std::vector<std::string> events;
    Components components;
    add(components, events, "snapshot");
    add(components, events, "sender");
    add(components, events, "server");
    REQUIRE(components.start());
    components.stop();
    components.stop();  // twice: nothing more
    CHECK(events == std::vector<std::string>{"start snapshot", "start sender", "start server",
                                             "stop server", "stop sender", "stop snapshot"});
    CHECK(components.names() == std::vector<std::string>{"snapshot", "sender", "server"});
}

TEST_CASE("a component that refuses to start stops those started before it", "[components]") {
    std::vector<std::string> events;
    Components components;
    add(components, events, "snapshot");
    add(components, events, "server", false);
    add(components, events, "never");
    CHECK_FALSE(components.start());
    CHECK(events == std::vector<std::string>{"start snapshot", "start server", "stop snapshot"});
}

TEST_CASE("components still running when the list goes away are stopped", "[components]") {
    std::vector<std::string> events;
    {
        Components components;
        add(components, events, "a");
        add(components, events, "b");
        REQUIRE(components.start());
    }
    CHECK(events == std::vector<std::string>{"start a", "start b", "stop b", "stop a"});
}

}  // namespace components_test
