#pragma once
// Data sets in host memory, float32, row-major, ready to be copied to a backend.
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace mf {

// What the column after each row's targets holds, where y has one: Keras's fit(sample_weight=...),
// applied in training and evaluation alike, or the weight of the row's class from
// fit(class_weight=...), applied in training only (Keras evaluates, validation rows included,
// without class weights).
enum class RowWeights { none, sample, by_class };

// Keras's class_weight: a weight per class index; a class it does not name weighs 1.
using ClassWeights = std::map<int, float>;

struct Dataset {
  int64_t rows = 0;
  int features = 0;
  // columns of y's targets: 1 for a class index, a binary label or one regression target
  int target_cols = 1;
  RowWeights weights = RowWeights::none;
  // distinct classes for classification data (labels 0..classes-1); 0 for regression
  int classes = 0;
  std::vector<float> x;  // (rows, features)
  // (rows, y_cols()): each row's targets, then its weight where weights is not none; class
  // indices stored as exact floats
  std::vector<float> y;
  int y_cols() const { return target_cols + (weights == RowWeights::none ? 0 : 1); }
  // Where the labels are, for messages: the first label that is not a class index when classes is 0
  // ("train.csv:7: label -1"), else the first row holding the largest class ("train.csv:9: label
  // 5", "labels.idx record 12: label 9"); empty for generated data.
  std::string label_at;
};

// The largest label a class index may be: floats hold every integer up to 2^24 exactly, and a
// larger integer label is far more likely a regression target than a class.
inline constexpr float kMaxClassLabel = 16777216.0f;

// Sets data.classes and data.label_at from labels y (data.target_cols per row of data.y_cols()), as
// a file's reader does: the largest label + 1 where every label is a whole number in [0,
// kMaxClassLabel], else 0; label_at names the first label that is not a class index, else the first
// of the largest, as WHERE[row]: label V ("y.npy[7]: label 2.5").
void summarize_labels(Dataset& data, std::span<const float> y, const std::string& where);

// Refuses the first value of `values` (rows of `cols`) that is NaN or infinite: a UserError naming
// it as WHERE[row, column] (WHERE[row] for one column), counted from 0 ("x[12, 3] is NaN: ...").
// Every loader calls it on x and y, and the Python package on the arrays it is given.
void check_finite(std::span<const float> values, int cols, const std::string& where);

// Each row's weight by its class, as Keras's class_weight_to_sample_weights
// (keras/src/trainers/data_adapters/data_adapter_utils.py) finds it: the class is the column of the
// row's largest target (the first of equals) where a row has several targets, else its one target
// rounded half to even; `weights` gives it, 1 where it names no such class. y is (rows,
// target_cols); the result (rows).
std::vector<float> class_weights_of(std::span<const float> y, int target_cols,
                                    const ClassWeights& weights);

// y(rows, target_cols) with each row followed by its weight from weights(rows): (rows,
// target_cols + 1).
std::vector<float> with_weight_column(std::span<const float> y, int target_cols,
                                      std::span<const float> weights);

// data's y given the column of its rows' class weights (class_weights_of); data.weights becomes
// by_class. std::invalid_argument where data already has a weight column.
void weigh_by_class(Dataset& data, const ClassWeights& weights);

// data's last target column taken as each row's sample weight (a file that holds the weights after
// the targets): data.target_cols one fewer, data.weights sample, its labels summarized again
// without the weights (WHERE as summarize_labels's). A UserError naming WHERE where y has no column
// to spare, or a weight is below 0 (its row counted from 0).
void take_sample_weights(Dataset& data, const std::string& where);

struct DataSplit {
  std::string description;  // e.g. "fashion-mnist (60000 train, 10000 test)"
  Dataset train;
  std::optional<Dataset> test;  // absent when the source has no test set
};

// Loads a data source. Sources:
//   fashion-mnist             the four IDX files in fashion_mnist_dir()
//   mnist:DIR                 train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-* in DIR
//                             (each plain or .gz)
//   csv:TRAIN[,TEST]          CSV files: features then the label(s) per line, an optional header
//                             line
//   synthetic:KIND[:k=v,...]  KIND is binary, regression or teacher; keys rows, features, classes,
//                             seed
//   npy:X,Y[,XTEST,YTEST]     numpy .npy files (np.save's): x (rows, features...) and y (rows,) or
//                             (rows, targets), of any real, integer or bool dtype (read as float32)
// Any problem with the source or its files is a UserError naming the file and what is wrong.
// `targets` is the number of target columns at the end of each CSV row (ModelSpec::targets); other
// sources have one label per row and refuse more. With `sample_weight` each CSV row or row of y.npy
// holds its weight after its targets (take_sample_weights), which other sources refuse.
DataSplit load_data(const std::string& source, int targets = 1, bool sample_weight = false);
// Whether load_data(source) gives a test set, from the name alone (nothing is read): every source
// but csv:TRAIN without a TEST file has one.
bool has_test_set(const std::string& source);

// At most the bytes of x and y that load_data(source) gives, known without reading the data: exact
// for a synthetic source, 4 for each byte of plain files (a float or label from at least one byte
// of IDX, two characters of CSV). nullopt where only reading tells: a compressed file, a missing
// one, a source load_data refuses.
std::optional<size_t> data_bytes_bound(const std::string& source);

// Where fashion-mnist is read from: $MULTIFIT_DATA/fashion-mnist when MULTIFIT_DATA is set (a
// folder of data sets by name, as a bundle for a GPU machine carries them), else the Debian package
// dataset-fashion-mnist's /usr/share/datasets/fashion-mnist. The folder need not exist.
std::string fashion_mnist_dir();

// The loaders behind load_data, for tests and callers that know the format.
// pixels scaled to [0,1]
Dataset load_idx_pair(const std::string& images_path, const std::string& labels_path);
Dataset load_csv(const std::string& path, int targets = 1);
Dataset load_npy_pair(const std::string& x_path, const std::string& y_path);
DataSplit make_synthetic(const std::string& spec);  // the part after "synthetic:"
size_t synthetic_bytes(const std::string& spec);  // its x and y, as make_synthetic(spec) makes them

}  // namespace mf
