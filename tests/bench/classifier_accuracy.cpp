// Precision and recall per corpus, for tests/bench/classifier_accuracy.sh. Compiled like
// classifier_cost.cpp: twice as a "part" against a classifier's sources (the baseline's and this
// tree's, `refgate` renamed by a macro, REFGATE_ACCURACY_PART naming the part's function), and
// once as the program, which reads each corpus file given and prints, per file, a line
// `file agents baseline-wrong current-wrong`: for a crawler corpus (a file named `crawlers-*`)
// the agents counted as human, for a browser corpus those counted as anything else.
// With --show, it then prints the current classifier's wrong agents of every corpus that is not a
// hold-out (a file whose name holds `holdout`): a hold-out's agents are never shown.

#include <string>
#include <string_view>

#ifdef REFGATE_ACCURACY_PART

#include "refgate/domain/click_classifier.hpp"

bool REFGATE_ACCURACY_PART(std::string_view agent) {
    return refgate::ClickClassifier::builtin().classify(
               refgate::ClickSignals{.user_agent = agent}) == refgate::ClickClass::human;
}

#else

#include <cstdio>
#include <fstream>
#include <vector>

bool baseline_human(std::string_view agent);
bool current_human(std::string_view agent);

namespace {

std::vector<std::string> read_agents(const std::string& path) {
    std::ifstream in(path);
    std::vector<std::string> agents;
    for (std::string line; std::getline(in, line);) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty() || line.front() == '#') continue;
        agents.push_back(line);
    }
    return agents;
}

std::string base_name(const std::string& path) {
    const auto slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

int main(int argc, char** argv) {
    bool show = false;
    std::vector<std::string> files;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--show") {
            show = true;
        } else {
            files.push_back(arg);
        }
    }
    std::vector<std::string> shown;
    for (const std::string& file : files) {
        const std::string name = base_name(file);
        const bool crawlers = name.rfind("crawlers", 0) == 0;
        const bool holdout = name.find("holdout") != std::string::npos;
        std::size_t total = 0;
        std::size_t baseline_wrong = 0;
        std::size_t current_wrong = 0;
        for (const std::string& agent : read_agents(file)) {
            ++total;
            baseline_wrong += baseline_human(agent) == crawlers;
            const bool wrong = current_human(agent) == crawlers;
            current_wrong += wrong;
            if (wrong && show && !holdout) shown.push_back(name + ": " + agent);
        }
        std::printf("%s %zu %zu %zu\n", name.c_str(), total, baseline_wrong, current_wrong);
    }
    for (const std::string& line : shown) std::printf("wrong %s\n", line.c_str());
    return 0;
}

#endif
