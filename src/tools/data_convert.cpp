// refgate_data: converts the pinned data packages of third_party/ (package-lock.json there) into
// the text refgate embeds, at build time. Parsing is JSON's, not a guess at the files' layout.
//
//   refgate_data crawler-patterns PACKAGE OUT   crawler-user-agents -> `bot-regex` lines
//   refgate_data common-passwords PACKAGE OUT   @zxcvbn-ts/language-common -> one password a line
//   refgate_data common-passwords - OUT         no list (-DREFGATE_PASSWORD_LIST=OFF)
//   refgate_data crawler-patterns - OUT         no patterns (-DREFGATE_CRAWLER_PATTERNS=OFF)
//
// OUT is rewritten only when its text changes, so that a reconfigure rebuilds nothing. Exits 1
// with a message naming the file when a package is missing or does not read as expected.

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

struct Failure : std::runtime_error {
    using std::runtime_error::runtime_error;
};

std::string read_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        throw Failure("missing " + path.string() +
                      ": run `npm ci` in third_party (deploy/local/run.sh and test.sh do)");
    }
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

Json read_json(const fs::path& path) {
    try {
        return Json::parse(read_file(path));
    } catch (const Json::exception& e) {
        throw Failure(path.string() + " does not parse as JSON: " + e.what());
    }
}

// "NAME VERSION (license: LICENSE)" from the package's manifest.
std::string package_line(const fs::path& package) {
    const Json manifest = read_json(package / "package.json");
    auto field = [&](const char* key) {
        if (!manifest.contains(key) || !manifest[key].is_string())
            throw Failure((package / "package.json").string() + " has no '" + key + "'");
        return manifest[key].get<std::string>();
    };
    return field("name") + " " + field("version") + " (license: " + field("license") + ")";
}

bool one_line(std::string_view text) {
    return !text.empty() && text.find_first_of("\r\n") == std::string_view::npos;
}

std::string crawler_patterns(const fs::path& package) {
    const fs::path data = package / "crawler-user-agents.json";
    const Json entries = read_json(data);
    if (!entries.is_array() || entries.empty())
        throw Failure(data.string() + " is not a list of crawler entries");
    std::string text = "# Crawler patterns of the npm package " + package_line(package) +
                       ",\n# converted at build time by refgate_data (src/tools/data_convert.cpp); "
                       "pinned in third_party/package-lock.json.\n";
    for (const auto& entry : entries) {
        if (!entry.is_object() || !entry.contains("pattern") || !entry["pattern"].is_string() ||
            !one_line(entry["pattern"].get_ref<const std::string&>()))
            throw Failure(data.string() + ": an entry has no one-line pattern: " + entry.dump());
        text.append("bot-regex ").append(entry["pattern"].get_ref<const std::string&>());
        text.push_back('\n');
    }
    return text;
}

// Lower case in ASCII: the policy compares entries so.
std::string ascii_lower(std::string text) {
    for (char& c : text) {
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
    return text;
}

std::string common_passwords(const fs::path& package) {
    const fs::path data = package / "src" / "passwords.json";
    const Json entries = read_json(data);
    if (!entries.is_array()) throw Failure(data.string() + " is not a list of passwords");
    std::string lines;
    std::size_t count = 0;
    for (const auto& entry : entries) {
        if (!entry.is_string() || !one_line(entry.get_ref<const std::string&>()))
            throw Failure(data.string() + ": an entry is not a one-line string: " + entry.dump());
        lines.append(ascii_lower(entry.get<std::string>())).push_back('\n');
        ++count;
    }
    if (count < 1000)
        throw Failure(data.string() + ": only " + std::to_string(count) +
                      " entries; expected a list of tens of thousands");
    return "npm package " + package_line(package) + ", " + std::to_string(count) +
           " passwords, most common first; pinned in third_party/package-lock.json\n" + lines;
}

void write_if_changed(const fs::path& out, const std::string& text) {
    std::error_code ignored;
    if (fs::exists(out, ignored)) {
        std::ifstream in(out, std::ios::binary);
        std::string old{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
        if (old == text) return;
    }
    fs::create_directories(out.parent_path(), ignored);
    const fs::path temporary = out.string() + ".tmp";
    {
        std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
        file << text;
        if (!file.flush()) throw Failure("cannot write " + temporary.string());
    }
    fs::rename(temporary, out);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 4) {
        std::cerr << "usage: refgate_data crawler-patterns|common-passwords PACKAGE|- OUT\n";
        return 2;
    }
    const std::string_view kind = argv[1];
    const std::string package = argv[2];
    try {
        std::string text;
        if (kind == "crawler-patterns") {
            text = package == "-" ? "" : crawler_patterns(package);
        } else if (kind == "common-passwords") {
            text = package == "-" ? "" : common_passwords(package);
        } else {
            std::cerr << "refgate_data: unknown data set '" << kind << "'\n";
            return 2;
        }
        write_if_changed(argv[3], text);
    } catch (const std::exception& e) {
        std::cerr << "refgate_data: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
