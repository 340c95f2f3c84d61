// Classification cost per click, for tests/bench/classifier_cost.sh. This file is compiled three
// times: twice as a "part" against a classifier's sources (the baseline's and this tree's, each
// with `refgate` renamed by a macro so that both link into one program, and REFGATE_COST_PASS
// naming the part's function), and once as the program, which alternates the two parts' passes
// over the same clicks so that both see the same load on the machine.

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

// One pass over the clicks: ns per click; `bots` is set to how many were counted as bot.
using CostPass = double (*)(const std::vector<std::string>& clicks, bool use_cache,
                            std::size_t& bots);

#ifdef REFGATE_COST_PASS

#include "refgate/domain/click_classifier.hpp"

// The classifier's names are in refgate::domain since issue 40 and in refgate before it; a baseline
// from either side compiles with both namespaces made visible here.
namespace refgate::domain {}
using namespace refgate;
using namespace refgate::domain;

double REFGATE_COST_PASS(const std::vector<std::string>& clicks, bool use_cache,
                         std::size_t& bots) {
    const ClickClassifier& classifier = ClickClassifier::builtin();
    static AgentMatchCache cache(classifier);  // one per thread, as on the I/O threads
    std::size_t found = 0;
    const auto start = std::chrono::steady_clock::now();
    for (const std::string& agent : clicks) {
        const ClickSignals signals{.user_agent = agent};
        const auto click_class = use_cache ? classifier.classify(signals, cache.match(agent))
                                           : classifier.classify(signals);
        found += click_class == ClickClass::bot;
    }
    const auto end = std::chrono::steady_clock::now();
    bots = found;
    return std::chrono::duration<double, std::nano>(end - start).count() /
           static_cast<double>(clicks.size());
}

#else

#include <algorithm>
#include <cstdio>
#include <fstream>

double baseline_pass(const std::vector<std::string>&, bool, std::size_t&);
double current_pass(const std::vector<std::string>&, bool, std::size_t&);

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s CLICKS_FILE ROUNDS\n", argv[0]);
        return 2;
    }
    std::ifstream in(argv[1]);
    std::vector<std::string> clicks;
    for (std::string line; std::getline(in, line);) clicks.push_back(line);
    const int rounds = std::stoi(argv[2]);

    // best[part][cache]: the least disturbed pass of each.
    const CostPass parts[2] = {baseline_pass, current_pass};
    double best[2][2] = {{1e18, 1e18}, {1e18, 1e18}};
    std::size_t bots[2][2] = {};
    for (int r = 0; r <= rounds; ++r) {  // round 0 builds the classifiers and warms up
        for (int part = 0; part < 2; ++part) {
            for (int cache = 0; cache < 2; ++cache) {
                const double ns = parts[part](clicks, cache == 1, bots[part][cache]);
                if (r > 0) best[part][cache] = std::min(best[part][cache], ns);
            }
        }
    }
    for (int part = 0; part < 2; ++part) {
        if (bots[part][0] != bots[part][1]) {
            std::fprintf(stderr, "the cache changed answers: %zu vs %zu bots\n", bots[part][0],
                         bots[part][1]);
            return 1;
        }
    }
    std::printf("%.1f %.1f %zu %.1f %.1f %zu\n", best[0][0], best[0][1], bots[0][0], best[1][0],
                best[1][1], bots[1][0]);
    return 0;
}

#endif
