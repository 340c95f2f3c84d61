#pragma once

#include <filesystem>
#include <string>

namespace refgate::test {

// A variable that deploy/local/test.sh exports; a missing one fails the test with its name, so a
// suite run outside test.sh cannot pass by testing nothing.
std::string require_env(const char* name);

// A fresh directory under TMPDIR (/tmp by default), removed with everything in it at the end of
// the scope.
class TempDir {
  public:
    TempDir();
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::filesystem::path& path() const { return path_; }
    std::string file(const std::string& name) const { return (path_ / name).string(); }

  private:
    std::filesystem::path path_;
};

// A random lower-case identifier, for database names and keys that must not collide.
std::string random_id(std::size_t length = 12);

// A TCP port on 127.0.0.1 that nothing listens on right now.
int unused_port();

// The checkout's root. __FILE__ is relative to the build directory while ctest runs the tests in
// another one, so this looks upwards from the working directory for deploy/local/demo.json.
std::filesystem::path source_root();

// The whole file, or "" when it cannot be read.
std::string read_text(const std::string& path);

// Today's UTC date, "2026-11-29", as refgate names its daily keys.
std::string utc_today();

// Runs a shell command; returns its exit code, with stdout and stderr appended to `output`.
int run_shell(const std::string& command, std::string& output);

}  // namespace refgate::test
