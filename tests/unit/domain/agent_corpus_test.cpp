#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "refgate/domain/click_classifier.hpp"

// The classifier against the corpora of tests/data/agents (see the README there) and the
// package's own example agents: no browser may be counted as anything but human, and at least
// 99.5 % of each crawler corpus must be kept out of human.
namespace agent_corpus_test {

using refgate::ClickClass;
using refgate::ClickClassifier;
using refgate::ClickSignals;

const std::string kData = std::string(REFGATE_SOURCE_DIR) + "/tests/data/agents/";
const std::string kPackageInstances = std::string(REFGATE_SOURCE_DIR) +
                                      "/src/domain/agents/node_modules/crawler-user-agents/"
                                      "crawler-user-agents.json";

// One agent a line; `#` comment lines and blank lines skipped.
std::vector<std::string> read_lines(const std::string& path) {
    std::ifstream in(path);
    REQUIRE(in.good());
    std::vector<std::string> agents;
    for (std::string line; std::getline(in, line);) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty() || line.front() == '#') continue;
        agents.push_back(line);
    }
    return agents;
}

// Every `instances` entry of the package's crawler-user-agents.json.
std::vector<std::string> package_instances() {
    std::ifstream in(kPackageInstances);
    REQUIRE(in.good());
    const nlohmann::json entries = nlohmann::json::parse(in);
    std::vector<std::string> agents;
    for (const auto& entry : entries) {
        for (const auto& instance : entry.value("instances", nlohmann::json::array())) {
            agents.push_back(instance.get<std::string>());
        }
    }
    return agents;
}

bool human(std::string_view agent) {
    return ClickClassifier::builtin().classify(ClickSignals{.user_agent = agent}) ==
           ClickClass::human;
}

struct Tally {
    std::size_t total = 0;
    std::size_t not_human = 0;
    std::vector<std::string> counted_human;
};

Tally tally(const std::vector<std::string>& agents) {
    Tally t;
    for (const std::string& agent : agents) {
        ++t.total;
        if (human(agent)) {
            t.counted_human.push_back(agent);
        } else {
            ++t.not_human;
        }
    }
    return t;
}

double percent(std::size_t part, std::size_t whole) {
    return whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole);
}

TEST_CASE("no browser or in-app browser of the corpus is counted as anything but human",
          "[classifier][corpus]") {
    const std::vector<std::string> browsers = read_lines(kData + "browsers.txt");
    CHECK(browsers.size() >= 150);
    for (const std::string& agent : browsers) {
        INFO(agent);
        CHECK(human(agent));
    }
}

TEST_CASE("at least 99.5 % of every crawler corpus is kept out of human, with precision and recall",
          "[classifier][corpus]") {
    struct Corpus {
        const char* name;
        std::vector<std::string> agents;
    };
    const Corpus corpora[] = {
        {"isbot fixtures (held apart from the package)",
         read_lines(kData + "crawlers-isbot-fixtures.txt")},
        {"operators' documentation", read_lines(kData + "crawlers-documented.txt")},
        {"crawler-user-agents instances (the package's own)", package_instances()},
    };
    const Tally browsers = tally(read_lines(kData + "browsers.txt"));
    const std::size_t false_positives = browsers.total - browsers.counted_human.size();

    std::size_t all = 0;
    std::size_t caught = 0;
    std::printf("| corpus | agents | not human | recall |\n|---|---:|---:|---:|\n");
    for (const Corpus& corpus : corpora) {
        const Tally t = tally(corpus.agents);
        all += t.total;
        caught += t.not_human;
        std::printf("| %s | %zu | %zu | %.2f %% |\n", corpus.name, t.total, t.not_human,
                    percent(t.not_human, t.total));
        for (const std::string& agent : t.counted_human)
            std::printf("  human: %s\n", agent.c_str());
        INFO(corpus.name);
        CHECK(t.total >= 100);
        CHECK(percent(t.not_human, t.total) >= 99.5);
    }
    std::printf("| browsers and in-app browsers | %zu | %zu | (false positives) |\n",
                browsers.total, false_positives);
    std::printf("precision %.2f %%, recall %.2f %% over %zu crawlers and %zu browsers\n",
                percent(caught, caught + false_positives), percent(caught, all), all,
                browsers.total);
    CHECK(false_positives == 0);
}

}  // namespace agent_corpus_test
