#include "nn/weights.h"

#include <cstdint>
#include <cstring>
#include <fstream>
#include <vector>

#include "runtime/error.h"
#include "runtime/input_file.h"
#include "runtime/output_file.h"

namespace mf {
namespace {

constexpr char kMagic[4] = {'M', 'F', 'W', '2'};
constexpr char kFirstMagic[4] = {'M', 'F', 'W', '1'};
constexpr uint32_t kBias = 1, kCenter = 2, kScale = 4;

struct LayerShape {
  uint32_t kind, in, out, activation, flags;
};

std::vector<LayerShape> layer_shapes(const ModelSpec& spec) {
  std::vector<LayerShape> shapes;
  for (size_t i = 0; i < spec.layers.size(); ++i) {
    const LayerSpec& l = spec.layers[i];
    const uint32_t flags = (l.kind == LayerKind::dense && l.use_bias ? kBias : 0) |
                           (l.kind == LayerKind::batch_normalization && l.center ? kCenter : 0) |
                           (l.kind == LayerKind::batch_normalization && l.scale ? kScale : 0);
    shapes.push_back({uint32_t(l.kind), uint32_t(i == 0 ? spec.input : spec.width(i - 1)),
                      uint32_t(spec.width(i)), uint32_t(l.activation), flags});
  }
  return shapes;
}

template <class T>
void append(std::string& bytes, const T* data, size_t count) {
  bytes.append(reinterpret_cast<const char*>(data), count * sizeof(T));
}

template <class T>
bool read(std::ifstream& in, T* data, size_t count) {
  return bool(in.read(reinterpret_cast<char*>(data), std::streamsize(count * sizeof(T))));
}

std::string shape_words(const LayerShape& s) {
  return std::string(to_string(LayerKind(s.kind))) + " " + std::to_string(s.in) + "x" +
         std::to_string(s.out);
}

}  // namespace

void save_weights(Model& model, const std::string& path, int member) {
  const std::vector<LayerShape> shapes = layer_shapes(model.spec());
  const std::vector<float> weights = model.get_weights(member);
  const uint32_t layers = uint32_t(shapes.size());
  const uint64_t count = weights.size();
  std::string bytes(kMagic, 4);
  append(bytes, &layers, 1);
  append(bytes, shapes.data(), shapes.size());
  append(bytes, &count, 1);
  append(bytes, weights.data(), weights.size());
  write_output_file(path, "the weights file", bytes);
}

void load_weights(Model& model, const std::string& path, int member) {
  const ModelSpec& spec = model.spec();
  // The file holds a small header and the weights; anything much larger is not one.
  check_input_file(path, "weights file",
                   uintmax_t(Model::weight_count(spec)) * sizeof(float) + (size_t(1) << 20));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError(path + ": cannot read the weights file");
  auto fail = [&](const std::string& what) {
    throw UserError(path + ": " + what + " (model '" + spec.name + "')");
  };
  char magic[4];
  uint32_t layers = 0;
  if (!read(in, magic, 4)) fail("not a multifit weights file");
  const bool first_form = std::memcmp(magic, kFirstMagic, 4) == 0;
  if (!first_form && std::memcmp(magic, kMagic, 4) != 0) fail("not a multifit weights file");
  const std::vector<LayerShape> expected = layer_shapes(spec);
  if (!read(in, &layers, 1)) fail("truncated header");
  if (layers != expected.size())
    fail("has " + std::to_string(layers) + " layers, the spec has " +
         std::to_string(expected.size()));
  for (size_t i = 0; i < layers; ++i) {
    LayerShape got{};
    if (first_form) {  // Dense layers with biases: {in, out, activation}
      uint32_t dense[3];
      if (!read(in, dense, 3)) fail("truncated header");
      got = {uint32_t(LayerKind::dense), dense[0], dense[1], dense[2], kBias};
    } else if (!read(in, &got, 1)) {
      fail("truncated header");
    }
    const LayerShape& want = expected[i];
    const std::string layer = "layer " + std::to_string(i + 1);
    if (got.kind != want.kind || got.in != want.in || got.out != want.out)
      fail(layer + " is " +
           (got.kind <= uint32_t(LayerKind::flatten) ? shape_words(got) : "of an unknown kind") +
           " in the file, " + shape_words(want) + " in the spec");
    if (got.flags != want.flags)
      fail(layer + " has other weights in the file than the spec gives it (bias, center, scale)");
    if (got.activation != want.activation) fail(layer + " has another activation than in the spec");
  }
  uint64_t count = 0;
  std::vector<float> weights(static_cast<size_t>(Model::weight_count(spec)));
  if (!read(in, &count, 1) || count != weights.size() || !read(in, weights.data(), weights.size()))
    fail("weights are truncated or of the wrong count");
  if (in.peek() != std::ifstream::traits_type::eof()) fail("has bytes after the weights");
  model.set_weights(weights, member);
}

}  // namespace mf
