// load_data: a source name to a train set and, where the source has one, a test set.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "data/dataset.h"
#include "runtime/error.h"

namespace mf {
namespace {

namespace fs = std::filesystem;

// Where the Debian package dataset-fashion-mnist installs its files.
constexpr char kDebianDatasets[] = "/usr/share/datasets";
constexpr char kAllowedSources[] =
    "fashion-mnist, mnist:DIR, csv:TRAIN[,TEST], npy:X,Y[,XTEST,YTEST] or synthetic:KIND[:key=value,...]";
constexpr const char* kIdxNames[] = {"train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                                     "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"};

// The test set must fit a model trained on the train set. Each keeps its own labels' class count,
// so that a label that does not fit the model is reported in the file that holds it.
void check_test_set(const Dataset& train, const Dataset& test, const std::string& test_name,
                    const std::string& train_name) {
  if (test.features != train.features)
    throw UserError(test_name + ": " + std::to_string(test.features) + " features per row, but " +
                    train_name + " has " + std::to_string(train.features) +
                    "; the test set needs the train set's features");
}

std::string describe(const std::string& name, const DataSplit& split) {
  const std::string test = split.test ? std::to_string(split.test->rows) + " test" : "no test set";
  return name + " (" + std::to_string(split.train.rows) + " train, " + test + ")";
}

// Error codes instead of exceptions: an unreadable path counts as absent, and the reader says why.
bool path_exists(const fs::path& path) {
  std::error_code error;
  return fs::exists(path, error);
}

bool is_dir(const fs::path& path) {
  std::error_code error;
  return fs::is_directory(path, error);
}

// DIR/NAME, or DIR/NAME.gz when only that exists.
std::string idx_path(const fs::path& dir, const std::string& name) {
  const fs::path plain = dir / name, gz = dir / (name + ".gz");
  if (path_exists(plain)) return plain.string();
  if (path_exists(gz)) return gz.string();
  throw UserError(plain.string() + ": not found, nor " + gz.filename().string() +
                  "; the directory needs " + kIdxNames[0] + ", " + kIdxNames[1] + ", " +
                  kIdxNames[2] + " and " + kIdxNames[3] + ", each plain or .gz");
}

DataSplit load_idx_dir(const std::string& name, const fs::path& dir) {
  std::vector<std::string> paths;
  for (const char* file : kIdxNames) paths.push_back(idx_path(dir, file));
  DataSplit split;
  split.train = load_idx_pair(paths[0], paths[1]);
  split.test = load_idx_pair(paths[2], paths[3]);
  check_test_set(split.train, *split.test, paths[2], paths[0]);
  split.description = describe(name, split);
  return split;
}

DataSplit load_fashion_mnist() {
  const std::string dir = fashion_mnist_dir();
  if (!is_dir(dir)) {
    const char* root = std::getenv("MULTIFIT_DATA");
    throw UserError(
        "fashion-mnist: " + dir + " not found; " +
        (root && *root
             ? "MULTIFIT_DATA=" + std::string(root) +
                   " needs a fashion-mnist folder with the four IDX files"
             : std::string(
                   "install the Debian package dataset-fashion-mnist, set MULTIFIT_DATA to a folder holding fashion-mnist/, or use --data mnist:DIR")));
  }
  return load_idx_dir("fashion-mnist", dir);
}

DataSplit load_mnist_dir(const std::string& source, const std::string& dir) {
  if (dir.empty())
    throw UserError("data source '" + source + "': no directory given; write mnist:DIR");
  if (!is_dir(dir))
    throw UserError(dir +
                    ": not a directory; mnist:DIR needs a directory holding the four IDX files");
  return load_idx_dir(source, dir);
}

// csv:TRAIN[,TEST]'s files: the train file and the test file ("" for none).
std::pair<std::string, std::string> csv_files(const std::string& source, const std::string& files) {
  const size_t comma = files.find(',');
  const std::string train = files.substr(0, comma);
  const std::string test = comma == std::string::npos ? "" : files.substr(comma + 1);
  const bool bad_test =
      comma != std::string::npos && (test.empty() || test.find(',') != std::string::npos);
  if (train.empty() || bad_test)
    throw UserError(
        "data source '" + source +
        "': not a train file and an optional test file; write csv:TRAIN or csv:TRAIN,TEST");
  return {train, test};
}

DataSplit load_csv_files(const std::string& source, const std::string& files, int targets,
                         bool sample_weight) {
  const auto [train, test] = csv_files(source, files);
  DataSplit split;
  split.train = load_csv(train, targets + (sample_weight ? 1 : 0));
  if (sample_weight) take_sample_weights(split.train, train);
  if (!test.empty()) {
    split.test = load_csv(test, targets + (sample_weight ? 1 : 0));
    if (sample_weight) take_sample_weights(*split.test, test);
    check_test_set(split.train, *split.test, test, train);
  }
  split.description = describe(source, split);
  return split;
}

// npy:X,Y[,XTEST,YTEST]'s files: two or four.
std::vector<std::string> npy_files(const std::string& source, const std::string& files) {
  std::vector<std::string> paths;
  for (size_t at = 0;;) {
    const size_t comma = files.find(',', at);
    paths.push_back(files.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  const bool empty =
      std::any_of(paths.begin(), paths.end(), [](const std::string& p) { return p.empty(); });
  if ((paths.size() != 2 && paths.size() != 4) || empty)
    throw UserError(
        "data source '" + source +
        "': not x and y files, and optionally test x and y; write npy:X.npy,Y.npy or npy:X.npy,Y.npy,XTEST.npy,YTEST.npy");
  return paths;
}

DataSplit load_npy_files(const std::string& source, const std::string& files, int targets,
                         bool sample_weight) {
  const std::vector<std::string> paths = npy_files(source, files);
  DataSplit split;
  split.train = load_npy_pair(paths[0], paths[1]);
  if (sample_weight) take_sample_weights(split.train, paths[1]);
  if (paths.size() == 4) {
    split.test = load_npy_pair(paths[2], paths[3]);
    if (sample_weight) take_sample_weights(*split.test, paths[3]);
    check_test_set(split.train, *split.test, paths[2], paths[0]);
  }
  for (const Dataset* set : {&split.train, split.test ? &*split.test : nullptr})
    if (set && set->target_cols != targets)
      throw UserError("data source '" + source + "': y has " + std::to_string(set->target_cols) +
                      " target columns, but the spec's targets is " + std::to_string(targets) +
                      "; set \"targets\" to y's columns" +
                      (sample_weight ? " before the last, each row's weight" : ""));
  split.description = describe(source, split);
  return split;
}

// Whether `text` starts with `prefix`; if so, `rest` is what follows it.
bool strip_prefix(const std::string& text, const char* prefix, std::string& rest) {
  if (!text.starts_with(prefix)) return false;
  rest = text.substr(std::char_traits<char>::length(prefix));
  return true;
}

// 4 bytes for each byte of the files, or nullopt when one is compressed or cannot be sized.
std::optional<size_t> plain_files_bound(const std::vector<std::string>& paths) {
  size_t bytes = 0;
  for (const std::string& path : paths) {
    std::error_code error;
    const uintmax_t size = fs::file_size(path, error);
    if (error || path.ends_with(".gz")) return std::nullopt;
    bytes += size_t(size) * 4;
  }
  return bytes;
}

std::optional<size_t> idx_dir_bound(const fs::path& dir) {
  std::vector<std::string> paths;
  for (const char* file : kIdxNames) {
    const fs::path plain = dir / file;
    if (!path_exists(plain)) return std::nullopt;  // absent, or only compressed
    paths.push_back(plain.string());
  }
  return plain_files_bound(paths);
}

}  // namespace

std::string fashion_mnist_dir() {
  const char* root = std::getenv("MULTIFIT_DATA");
  return (fs::path(root && *root ? root : kDebianDatasets) / "fashion-mnist").string();
}

DataSplit load_data(const std::string& source, int targets, bool sample_weight) {
  std::string rest;
  if (strip_prefix(source, "csv:", rest))
    return load_csv_files(source, rest, targets, sample_weight);
  if (strip_prefix(source, "npy:", rest))
    return load_npy_files(source, rest, targets, sample_weight);
  if (sample_weight)
    throw UserError(
        "data source '" + source +
        "': fit.sample_weight reads each row's weight after its targets, which only CSV or .npy files hold");
  if (targets != 1)
    throw UserError("data source '" + source + "': one label per row, but the spec's targets is " +
                    std::to_string(targets) +
                    "; several target columns come from CSV or .npy files");
  if (source == "fashion-mnist") return load_fashion_mnist();
  if (strip_prefix(source, "mnist:", rest)) return load_mnist_dir(source, rest);
  if (strip_prefix(source, "synthetic:", rest)) return make_synthetic(rest);
  throw UserError("data source '" + source + "': unknown; use " + kAllowedSources);
}

std::optional<size_t> data_bytes_bound(const std::string& source) {
  std::string rest;
  try {
    if (strip_prefix(source, "synthetic:", rest)) return synthetic_bytes(rest);
    if (strip_prefix(source, "csv:", rest)) {
      const auto [train, test] = csv_files(source, rest);
      return plain_files_bound(test.empty() ? std::vector{train} : std::vector{train, test});
    }
    if (strip_prefix(source, "npy:", rest)) return plain_files_bound(npy_files(source, rest));
  } catch (const UserError&) {
    return std::nullopt;  // load_data says what is wrong
  }
  if (source == "fashion-mnist") return idx_dir_bound(fashion_mnist_dir());
  if (strip_prefix(source, "mnist:", rest)) return idx_dir_bound(rest);
  return std::nullopt;
}

bool has_test_set(const std::string& source) {
  std::string files;
  if (strip_prefix(source, "npy:", files)) return std::count(files.begin(), files.end(), ',') == 3;
  return !strip_prefix(source, "csv:", files) || files.find(',') != std::string::npos;
}

}  // namespace mf
