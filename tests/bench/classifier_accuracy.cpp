// Precision and recall per corpus, for tests/bench/classifier_accuracy.sh. Compiled like
// classifier_cost.cpp: twice as a "part" against a classifier's sources (the baseline's and this
// tree's, `refgate` renamed by a macro, REFGATE_ACCURACY_PART naming the part's function), and
// once as the program.
//
// The program reads each corpus file given and prints, per file, a line
// `file agents app-stacks baseline-wrong current-wrong`. An app's own HTTP stack (Dalvik/,
// CFNetwork/, ...: this tree's agent_rules::is_app_http_stack) is neither a browser nor a
// crawler (docs/click-classes.md), so such agents are set aside and only counted; of the rest,
// wrong is, for a crawler corpus (a file named `crawlers-*`), an agent counted as human, and for
// a browser corpus one counted as anything else. With --filtered DIR it writes each corpus
// without the set-aside agents into DIR (for isbot's tally); with --show it prints the agents this
// tree gets wrong in every corpus that is not a hold-out (a file whose name holds `holdout`): a
// hold-out's agents are never shown.

#include <string>
#include <string_view>

#ifdef REFGATE_ACCURACY_PART

#include "refgate/domain/agent_rules.hpp"
#include "refgate/domain/click_classifier.hpp"

// The classifier's names are in refgate::domain since issue 40 and in refgate before it; a baseline
// from either side compiles with both namespaces made visible here.
namespace refgate::domain {}
using namespace refgate;
using namespace refgate::domain;

bool REFGATE_ACCURACY_PART(std::string_view agent) {
    return ClickClassifier::builtin().classify(ClickSignals{.user_agent = agent}) ==
           ClickClass::human;
}

#ifdef REFGATE_ACCURACY_APP_STACK
bool REFGATE_ACCURACY_APP_STACK(std::string_view agent) {
    return agent_rules::is_app_http_stack(agent);
}
#endif

#else

#include <cstdio>
#include <fstream>
#include <vector>

bool baseline_human(std::string_view agent);
bool current_human(std::string_view agent);
bool current_app_stack(std::string_view agent);

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
    std::string filtered_dir;
    std::vector<std::string> files;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--show") {
            show = true;
        } else if (arg == "--filtered" && i + 1 < argc) {
            filtered_dir = argv[++i];
        } else {
            files.push_back(arg);
        }
    }
    std::vector<std::string> shown;
    for (const std::string& file : files) {
        const std::string name = base_name(file);
        const bool crawlers = name.rfind("crawlers", 0) == 0;
        const bool holdout = name.find("holdout") != std::string::npos;
        std::ofstream filtered;
        if (!filtered_dir.empty()) filtered.open(filtered_dir + "/" + name);
        std::size_t total = 0;
        std::size_t app_stacks = 0;
        std::size_t baseline_wrong = 0;
        std::size_t current_wrong = 0;
        for (const std::string& agent : read_agents(file)) {
            if (current_app_stack(agent)) {
                ++app_stacks;
                continue;
            }
            if (filtered.is_open()) filtered << agent << '\n';
            ++total;
            baseline_wrong += baseline_human(agent) == crawlers;
            const bool wrong = current_human(agent) == crawlers;
            current_wrong += wrong;
            if (wrong && show && !holdout) shown.push_back(name + ": " + agent);
        }
        std::printf("%s %zu %zu %zu %zu\n", name.c_str(), total, app_stacks, baseline_wrong,
                    current_wrong);
    }
    for (const std::string& line : shown) std::printf("wrong %s\n", line.c_str());
    return 0;
}

#endif
