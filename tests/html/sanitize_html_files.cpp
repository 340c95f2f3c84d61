// sanitize_html_files IN_DIR OUT_DIR: writes sanitize_html() of every file of IN_DIR to the file
// of the same name in OUT_DIR, for html5lib_differential.py (a browser's parser reading what the
// disclosure sanitiser lets through).

#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>

#include "refgate/domain/html.hpp"

int main(int argc, char** argv) {
    if (argc != 3) {
        std::cerr << "usage: sanitize_html_files IN_DIR OUT_DIR\n";
        return 2;
    }
    namespace fs = std::filesystem;
    std::size_t count = 0;
    for (const auto& entry : fs::directory_iterator(argv[1])) {
        if (!entry.is_regular_file()) continue;
        std::ifstream in(entry.path(), std::ios::binary);
        std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        std::ofstream out(fs::path(argv[2]) / entry.path().filename(), std::ios::binary);
        out << refgate::domain::sanitize_html(html);
        if (!out) {
            std::cerr << "cannot write " << entry.path().filename() << "\n";
            return 1;
        }
        ++count;
    }
    std::cout << count << " files sanitised\n";
    return 0;
}
