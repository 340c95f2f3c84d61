#include "refgate/runtime/file_identity.hpp"

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace file_identity_test {

namespace {

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

}  // namespace

TEST_CASE("a file renamed over a path, or rewritten to another size, is another file",
          "[runtime]") {
    std::string dir_template = (std::filesystem::temp_directory_path() / "fileid.XXXXXX").string();
    REQUIRE(::mkdtemp(dir_template.data()) != nullptr);
    std::filesystem::path dir(dir_template);
    std::string path = (dir / "country.mmdb").string();
    CHECK_FALSE(refgate::runtime::file_identity(path));

    write(path, "first");
    auto first = refgate::runtime::file_identity(path);
    REQUIRE(first);
    CHECK(refgate::runtime::file_identity(path) == first);  // nothing changed: the same file

    write((dir / "new").string(), "first");  // the same size, another inode
    REQUIRE(std::rename((dir / "new").c_str(), path.c_str()) == 0);
    auto renamed = refgate::runtime::file_identity(path);
    REQUIRE(renamed);
    CHECK(renamed != first);

    write(path, "rewritten in place");
    CHECK(refgate::runtime::file_identity(path) != renamed);
    std::filesystem::remove_all(dir);
}

}  // namespace file_identity_test
