// Helpers shared by the unit tests in tests/unit; header-only.
//
//  * contains, user_error: check the message of an expected error;
//  * TempDirTest: a fixture with a fresh directory per test, to write input files into;
//  * idx_images, idx_labels: the bytes of small IDX files (the MNIST format);
//  * mlp: a ModelSpec of dense layers, for tests that set only what they are about.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <unistd.h>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <zlib.h>

#include "nn/spec.h"
#include "runtime/error.h"

namespace mf::test {

using Bytes = std::vector<unsigned char>;

inline bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != text.npos;
}

// The message of the `Error` (a UserError unless named) that `f()` throws; a test failure, and "",
// when it throws none. Any other exception passes through. For the context of a failure, put a
// SCOPED_TRACE before the call.
template <class Error = UserError, class F>
std::string user_error(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "the expected error was not thrown";
  return "";
}

// A fixture that gives each test a fresh, empty directory, dir(), and removes it afterwards.
// Its name holds the process id and the test's full name, so tests never share one.
class TempDirTest : public testing::Test {
 protected:
  void SetUp() override {
    const testing::TestInfo& test = *testing::UnitTest::GetInstance()->current_test_info();
    std::string name =
        "mf_" + std::to_string(getpid()) + "_" + test.test_suite_name() + "." + test.name();
    // parameterised tests have '/' in their names
    for (char& c : name)
      if (c == '/') c = '_';
    dir_ = std::filesystem::temp_directory_path() / name;
    std::filesystem::remove_all(dir_);
    ASSERT_TRUE(std::filesystem::create_directories(dir_)) << dir_;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  const std::filesystem::path& dir() const { return dir_; }

  // The path of `name` in the directory; the file need not exist.
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // Writes `text` or `bytes` as the file `name`, exactly; returns its path.
  std::string write(const std::string& name, const std::string& text) const {
    const std::string file = path(name);
    std::ofstream(file, std::ios::binary) << text;
    return file;
  }
  std::string write(const std::string& name, const Bytes& bytes) const {
    const std::string file = path(name);
    std::ofstream(file, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
    return file;
  }

  // Writes `bytes` gzip-compressed as the file `name`; returns its path.
  std::string write_gz(const std::string& name, const Bytes& bytes) const {
    const std::string file = path(name);
    gzFile gz = gzopen(file.c_str(), "wb");
    EXPECT_NE(gz, nullptr) << file;
    if (gz == nullptr) return file;
    EXPECT_EQ(gzwrite(gz, bytes.data(), unsigned(bytes.size())), int(bytes.size())) << file;
    EXPECT_EQ(gzclose(gz), Z_OK) << file;
    return file;
  }

 private:
  std::filesystem::path dir_;
};

// ---- IDX files: a header of big-endian 32-bit words, then one byte per pixel or label ----

inline void put_be32(Bytes& out, uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(uint8_t(value >> shift));
}

// An IDX image file whose header announces `count` images of rows x cols, followed by `pixels`
// (which need not be as many as announced).
inline Bytes idx_images(uint32_t count, uint32_t rows, uint32_t cols, const Bytes& pixels) {
  Bytes out;
  for (uint32_t word : {0x00000803u, count, rows, cols}) put_be32(out, word);
  out.insert(out.end(), pixels.begin(), pixels.end());
  return out;
}

// An IDX label file whose header announces `count` labels, followed by `labels`.
inline Bytes idx_labels(uint32_t count, const Bytes& labels) {
  Bytes out;
  for (uint32_t word : {0x00000801u, count}) put_be32(out, word);
  out.insert(out.end(), labels.begin(), labels.end());
  return out;
}

// ---- Model specs ---------------------------------------------------------------------

// A model of `input` features through the dense `layers`, trained with `loss`; the rest
// (optimizer, fit, seed, memory) keeps ModelSpec's defaults for the test to change.
inline ModelSpec mlp(int input, std::vector<LayerSpec> layers, Loss loss,
                     std::string name = "model") {
  ModelSpec spec;
  spec.name = std::move(name);
  spec.input = input;
  spec.layers = std::move(layers);
  spec.loss = loss;
  return spec;
}

}  // namespace mf::test
