#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "refgate/domain/agent_rules.hpp"
#include "refgate/domain/click_classifier.hpp"

// The classifier against every corpus of tests/data/agents (see the README there) and the
// package's own example agents. Each crawler corpus (`crawlers-*.txt`) must be kept out of
// `human` for at least 99.5 % of its agents, and each browser corpus (every other `.txt`) counted
// as anything but `human` for at most 0.5 %; an app's own HTTP stack (Dalvik/, CFNetwork/, ...) is
// neither, is set aside in every corpus and must never be `human` (a `prefetch`, or a `bot` where
// a crawler pattern names the app). Hold-out corpora (`holdout` in
// the name) are only counted: their agents are never printed, so no rule is tuned on them.
namespace agent_corpus_test {

namespace rules = refgate::domain::agent_rules;
using refgate::domain::ClickClass;
using refgate::domain::ClickClassifier;
using refgate::domain::ClickSignals;

const std::filesystem::path kData = std::filesystem::path(REFGATE_SOURCE_DIR) / "tests/data/agents";
const std::filesystem::path kPackageInstances =
    std::filesystem::path(REFGATE_SOURCE_DIR) /
    "third_party/node_modules/crawler-user-agents/crawler-user-agents.json";

// The targets of issue 39, as whole agents of `total`: at most 0.5 % wrong. Under 200 agents one
// agent is more than 0.5 %, so such a corpus may have one wrong (its rate is printed either way).
std::size_t allowed_wrong(std::size_t total) { return std::max<std::size_t>(total / 200, 1); }

// One agent a line; `#` comment lines and blank lines skipped.
std::vector<std::string> read_lines(const std::filesystem::path& path) {
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

ClickClass classify(std::string_view agent) {
    return ClickClassifier::builtin().classify(ClickSignals{.user_agent = agent});
}

struct Corpus {
    std::string name;
    std::vector<std::string> agents;
    bool crawlers = false;
    bool holdout = false;
};

std::vector<Corpus> corpora() {
    std::vector<Corpus> all;
    for (const auto& entry : std::filesystem::directory_iterator(kData)) {
        const std::string name = entry.path().filename().string();
        if (entry.path().extension() != ".txt") continue;
        all.push_back({name, read_lines(entry.path()), name.starts_with("crawlers"),
                       name.find("holdout") != std::string::npos});
    }
    all.push_back({"crawler-user-agents instances (the package's own)", package_instances(), true});
    std::sort(all.begin(), all.end(), [](const Corpus& a, const Corpus& b) {
        return std::pair(!a.crawlers, a.name) < std::pair(!b.crawlers, b.name);
    });
    return all;
}

double percent(std::size_t part, std::size_t whole) {
    return whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole);
}

TEST_CASE("no agent of the hand-written browser corpus is counted as anything but human",
          "[classifier][corpus]") {
    const std::vector<std::string> browsers = read_lines(kData / "browsers.txt");
    CHECK(browsers.size() >= 150);
    for (const std::string& agent : browsers) {
        INFO(agent);
        CHECK(classify(agent) == ClickClass::human);
    }
}

TEST_CASE(
    "at least 99.5 % of each crawler corpus is kept out of human and at most 0.5 % of each "
    "browser corpus, with precision and recall",
    "[classifier][corpus]") {
    const std::vector<Corpus> all = corpora();
    REQUIRE(std::count_if(all.begin(), all.end(), [](const Corpus& c) { return c.crawlers; }) >= 2);
    REQUIRE(std::count_if(all.begin(), all.end(), [](const Corpus& c) { return !c.crawlers; }) >=
            2);

    std::printf("| corpus | agents | app stacks | wrong | rate |\n|---|---:|---:|---:|---:|\n");
    for (const Corpus& corpus : all) {
        std::size_t total = 0;
        std::size_t app_stacks = 0;
        std::vector<std::string> wrong;
        for (const std::string& agent : corpus.agents) {
            const ClickClass click_class = classify(agent);
            if (rules::is_app_http_stack(agent)) {
                ++app_stacks;
                INFO(corpus.name << ": an app's HTTP stack is never human: " << agent);
                CHECK(click_class != ClickClass::human);
                continue;
            }
            ++total;
            if ((click_class == ClickClass::human) == corpus.crawlers) wrong.push_back(agent);
        }
        const double rate =
            corpus.crawlers ? percent(total - wrong.size(), total) : percent(wrong.size(), total);
        std::printf("| %s | %zu | %zu | %zu | %.2f %% %s |\n", corpus.name.c_str(), total,
                    app_stacks, wrong.size(), rate,
                    corpus.crawlers ? "kept out of human" : "out of human");
        if (!corpus.holdout) {
            for (const std::string& agent : wrong) std::printf("  wrong: %s\n", agent.c_str());
        }
        INFO(corpus.name << ": " << wrong.size() << " of " << total << " wrong");
        CHECK(total >= 100);
        CHECK(wrong.size() <= allowed_wrong(total));
    }
}

}  // namespace agent_corpus_test
