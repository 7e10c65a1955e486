// A bounded, seeded mutation fuzzer over what users hand multifit: spec and
// sweep JSON, CSV files and IDX files. Each input is a valid one with random
// damage (bytes flipped, inserted, deleted, runs duplicated or cut), written to
// a file and given to the loader. The only outcomes allowed are a result or a
// UserError (exit code 2 in the CLI); anything else fails, and this binary is
// built with AddressSanitizer and UndefinedBehaviorSanitizer, which stop it at
// the first bad memory access or undefined operation. Seeded: a failure reproduces.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "nn/spec.h"
#include "nn/sweep.h"
#include "runtime/error.h"
#include "tests/unit/test_support.h"

namespace mf {
namespace {

using test::Bytes;

// Damage `input` with 1 to 8 random edits.
Bytes mutate(Bytes input, std::mt19937_64& rng) {
  auto below = [&](size_t n) { return n == 0 ? size_t(0) : size_t(rng() % n); };
  const int edits = 1 + int(rng() % 8);
  for (int e = 0; e < edits; ++e) {
    const size_t at = below(input.size() + 1);
    switch (rng() % 6) {
      case 0:
        if (at < input.size()) input[at] ^= uint8_t(1u << (rng() % 8));
        break;  // flip a bit
      case 1:
        input.insert(input.begin() + long(at), uint8_t(rng()));
        break;  // insert a byte
      case 2:
        if (at < input.size()) input.erase(input.begin() + long(at));
        break;  // delete a byte
      case 3:
        input.resize(at);
        break;   // cut the tail
      case 4: {  // duplicate a run
        const size_t length = std::min(below(64) + 1, input.size() - std::min(at, input.size()));
        const Bytes run(input.begin() + long(at), input.begin() + long(at + length));
        input.insert(input.begin() + long(below(input.size() + 1)), run.begin(), run.end());
        break;
      }
      default: {  // an interesting byte
        static const uint8_t interesting[] = {0,   0xff, 0x7f, 0x80, '-',  '.', 'e',
                                              ',', '"',  '{',  '}',  '\n', '9'};
        if (at < input.size()) input[at] = interesting[rng() % sizeof interesting];
      }
    }
  }
  return input;
}

Bytes bytes_of(const std::string& text) { return Bytes(text.begin(), text.end()); }

class Fuzz : public test::TempDirTest {
 protected:
  // Mutates `seed` into at least `least` inputs, then on for `seconds` (at most `runs` in all),
  // writing each to `name` and calling `load`: the same first inputs on a machine however loaded,
  // more where there is time. A failure names the run, so it reproduces from the seed.
  void run(const Bytes& seed, const std::string& name,
           const std::function<void(const std::string&)>& load, double seconds = 2.0,
           int runs = 20000, int least = 200) {
    std::mt19937_64 rng(12345);
    const auto stop = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    int tried = 0;
    for (; tried < runs && (tried < least || std::chrono::steady_clock::now() < stop); ++tried) {
      const Bytes input = mutate(seed, rng);
      const std::string file = write(name, input);
      try {
        load(file);
      } catch (const UserError&) {
        // the expected refusal: one line, exit code 2
      } catch (const std::exception& e) {
        ADD_FAILURE() << name << " run " << tried << ": " << typeid(e).name() << ": " << e.what();
        return;
      }
    }
    RecordProperty(name + "_inputs", tried);
  }
};

TEST_F(Fuzz, Specs) {
  const Bytes seed = bytes_of(R"({"name": "m", "data": "synthetic:binary", "input": 20,
    "layers": [{"units": 64, "activation": "relu"}, {"units": 1, "activation": "sigmoid"}],
    "loss": "binary_crossentropy", "optimizer": {"name": "adam", "learning_rate": 0.001, "beta_1": 0.9},
    "fit": {"epochs": 2, "batch_size": 64, "validation_split": 0.1, "shuffle": true}, "seed": 1,
    "memory": {"limit": "4MiB", "mode": "reserve"}})");
  run(seed, "spec.json", [](const std::string& f) { load_model_spec(f); });
}

TEST_F(Fuzz, Sweeps) {
  write(
      "m.json",
      R"({"input": 20, "layers": [{"units": 1, "activation": "sigmoid"}], "loss": "binary_crossentropy"})");
  const Bytes grid =
      bytes_of(R"({"name": "g", "base": {"name": "b", "input": 20, "layers": [{"units": 64,
    "activation": "relu"}, {"units": 1, "activation": "sigmoid"}], "loss": "binary_crossentropy", "optimizer": "adam"},
    "grid": {"hidden": [[10], [100, 10]], "activation": ["tanh"], "learning_rate": [0.001, 0.01], "seed": [1, 2]}})");
  run(grid, "grid.json", [](const std::string& f) { load_sweep(f); });
  const Bytes list =
      bytes_of(R"({"name": "l", "base": {"fit": {"epochs": 1}}, "models": ["m.json", {"name": "x",
    "input": 2, "layers": [{"units": 1}], "loss": "mse", "fit": {"batch_size": 8}}]})");
  run(list, "list.json", [](const std::string& f) { load_sweep(f); });
}

TEST_F(Fuzz, CsvFiles) {
  const Bytes seed =
      bytes_of("x1,x2,x3,label\n0.5,1,-2e3,0\n1.25,+3,4,1\n-0,5.5e-3,6,2\n7,8,9,1\n");
  run(seed, "data.csv", [](const std::string& f) { load_csv(f); });
}

TEST_F(Fuzz, IdxFiles) {
  const std::string labels = write("labels", test::idx_labels(4, {0, 1, 2, 9}));
  const Bytes images =
      test::idx_images(4, 2, 3, Bytes{0,   10,  20,  30,  40,  50,  60,  70,  80,  90,  100, 110,
                                      120, 130, 140, 150, 160, 170, 180, 190, 200, 210, 220, 255});
  run(images, "images", [&](const std::string& f) { load_idx_pair(f, labels); });
  const std::string good_images = write("good-images", images);
  run(test::idx_labels(4, {0, 1, 2, 9}), "labels2",
      [&](const std::string& f) { load_idx_pair(good_images, f); });
}

}  // namespace
}  // namespace mf
