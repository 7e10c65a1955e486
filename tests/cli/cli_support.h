// Helpers of the CLI tests: run the multifit binary in a fresh folder per test, with its exit code,
// stdout and stderr, and read what it wrote.
#pragma once
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace cli_test {

namespace fs = std::filesystem;
using nlohmann::json;

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

inline std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

inline std::string quoted(const std::string& s) {  // for sh: '...' with ' escaped
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

inline std::string example(const std::string& name) {
  return std::string(MF_SOURCE_DIR) + "/examples/" + name;
}

struct Result {
  int rc = -1;
  std::string out, err;
  int err_lines() const { return int(std::count(err.begin(), err.end(), '\n')); }
};

class Cli : public testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        fs::temp_directory_path() / ("mf-cli-" + std::to_string(getpid()) + "-" +
                                     testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // Runs `multifit ARGS` (ARGS already quoted where needed) with stdout and stderr in files, after
  // the shell commands in `setup` (e.g. "ulimit -v 150000; ").
  Result multifit(const std::string& args, const std::string& setup = "") const {
    const std::string command = setup + quoted(MULTIFIT_BIN) + " " + args + " >" +
                                quoted(path("stdout")) + " 2>" + quoted(path("stderr")) +
                                " </dev/null";
    const int status = std::system(command.c_str());
    Result r;
    r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = read_file(path("stdout"));
    r.err = read_file(path("stderr"));
    return r;
  }

  // A copy of an example spec with some keys replaced.
  std::string spec_from(const std::string& name, const json& changes,
                        const std::string& file) const {
    json spec = json::parse(read_file(example(name)));
    spec.merge_patch(changes);
    std::ofstream(path(file)) << spec.dump(2);
    return path(file);
  }

  json result(const std::string& file) const { return json::parse(read_file(path(file))); }

  fs::path dir_;
};

}  // namespace cli_test
