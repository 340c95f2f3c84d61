// The one program of every fuzz target (CMakeLists.txt): it runs the target it is called as, by
// the last part of its name (build/fuzz/fuzz_location runs `location`; each fuzz_<name> is a link
// to refgate_fuzz), so that libFuzzer's command line, crash inputs and reproduction stay those of
// one program a target. One program compiles the targets' files in two unity batches: the JSON,
// Beast and Asio code they share is generated once a batch instead of once a target.

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.hpp"

namespace refgate::fuzz {
namespace {

struct Target {
    std::string_view name;
    Entry entry;
};

std::vector<Target>& targets() {
    static std::vector<Target> list;
    return list;
}

Entry chosen = nullptr;

}  // namespace

Registration::Registration(const char* name, Entry entry) { targets().push_back({name, entry}); }

}  // namespace refgate::fuzz

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** argv) {
    using namespace refgate::fuzz;
    std::string_view program = (*argv)[0];
    if (const auto slash = program.rfind('/'); slash != std::string_view::npos)
        program.remove_prefix(slash + 1);
    constexpr std::string_view kPrefix = "fuzz_";
    const std::string_view name =
        program.starts_with(kPrefix) ? program.substr(kPrefix.size()) : std::string_view{};
    for (const Target& target : targets()) {
        if (target.name == name) chosen = target.entry;
    }
    if (chosen == nullptr) {
        std::string names;
        for (const Target& target : targets()) names += " fuzz_" + std::string(target.name);
        std::fprintf(stderr, "refgate_fuzz: run it as one of its targets (links to it):%s\n",
                     names.c_str());
        std::exit(2);
    }
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    return refgate::fuzz::chosen(data, size);
}
