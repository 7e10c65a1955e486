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

constexpr char kMagic[4] = {'M', 'F', 'W', '1'};

// (in, out, activation) of every layer, as stored.
std::vector<uint32_t> layer_shapes(const ModelSpec& spec) {
  std::vector<uint32_t> shapes;
  uint32_t in = uint32_t(spec.input);
  for (const LayerSpec& l : spec.layers) {
    shapes.insert(shapes.end(), {in, uint32_t(l.units), uint32_t(l.activation)});
    in = uint32_t(l.units);
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

}  // namespace

void save_weights(Model& model, const std::string& path, int member) {
  const std::vector<uint32_t> shapes = layer_shapes(model.spec());
  const std::vector<float> params = model.get_params(member);
  const uint32_t layers = uint32_t(model.spec().layers.size());
  const uint64_t count = params.size();
  std::string bytes(kMagic, 4);
  append(bytes, &layers, 1);
  append(bytes, shapes.data(), shapes.size());
  append(bytes, &count, 1);
  append(bytes, params.data(), params.size());
  write_output_file(path, "the weights file", bytes);
}

void load_weights(Model& model, const std::string& path, int member) {
  // The file holds a small header and the parameters; anything much larger is not one.
  check_input_file(path, "weights file", uintmax_t(model.param_count()) * sizeof(float) + (size_t(1) << 20));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError(path + ": cannot read the weights file");
  auto fail = [&](const std::string& what) {
    throw UserError(path + ": " + what + " (model '" + model.spec().name + "')");
  };
  char magic[4];
  uint32_t layers = 0;
  if (!read(in, magic, 4) || std::memcmp(magic, kMagic, 4) != 0) fail("not a multifit weights file");
  const std::vector<uint32_t> expected = layer_shapes(model.spec());
  if (!read(in, &layers, 1)) fail("truncated header");
  if (layers != model.spec().layers.size())
    fail("has " + std::to_string(layers) + " layers, the spec has " + std::to_string(model.spec().layers.size()));
  std::vector<uint32_t> shapes(expected.size());
  if (!read(in, shapes.data(), shapes.size())) fail("truncated header");
  for (size_t i = 0; i < layers; ++i) {
    const uint32_t* got = &shapes[3 * i];
    const uint32_t* want = &expected[3 * i];
    if (got[0] != want[0] || got[1] != want[1])
      fail("layer " + std::to_string(i + 1) + " is " + std::to_string(got[0]) + "x" + std::to_string(got[1]) +
           " in the file, " + std::to_string(want[0]) + "x" + std::to_string(want[1]) + " in the spec");
    if (got[2] != want[2]) fail("layer " + std::to_string(i + 1) + " has another activation than in the spec");
  }
  uint64_t count = 0;
  std::vector<float> params(static_cast<size_t>(model.param_count()));
  if (!read(in, &count, 1) || count != params.size() || !read(in, params.data(), params.size()))
    fail("parameters are truncated or of the wrong count");
  if (in.peek() != std::ifstream::traits_type::eof()) fail("has bytes after the parameters");
  model.set_params(params, member);
}

}  // namespace mf
