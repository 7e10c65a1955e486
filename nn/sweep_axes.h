#pragma once
// The axes a sweep varies, one table for a grid's values and a search's draws (nn/sweep.h): each
// sets keys of a model's JSON spec, before the spec parser checks it, and adds a part to the
// model's name.
//
//   axis           sets                                        name part
//   hidden         the hidden layers (an array of widths)      h100x10: the widths joined by x (h0:
//   none) units          every hidden Dense's units                  u64 activation     the hidden
//   layers' activation               relu (any activation a Dense layer takes) dropout        every
//   Dropout layer's rate                  d0.2 learning_rate  optimizer.learning_rate lr0.001 (the
//   shortest form that reads back the same) batch_size     fit.batch_size b32 seed           seed
//   s7 epochs         fit.epochs                                  e5
//
// A hidden value is an array of widths: each is a copy of the base's first hidden block (its first
// Dense and the layers after it up to the next Dense: Dropout, BatchNormalization, Activation)
// with that width; the layers before that Dense and the last (output) layer are kept. A base with
// no hidden Dense gives linear Dense layers. The activation axis sets each hidden Activation
// layer's activation, and each hidden Dense's that no Activation layer follows before the next
// Dense (the Dense of a Dense, BatchNormalization, Activation block stays linear).
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace mf {

struct SweepAxis {
  const char* key;
  const char* prefix;  // of the model's name part
};

// The axes in the order a grid combines them (the first varies slowest) and names a model.
std::span<const SweepAxis> sweep_axes();
// Their keys, "hidden, units, ...", for a message.
const std::string& sweep_axis_list();
// The axis of that key; nullptr for none.
const SweepAxis* find_sweep_axis(const std::string& key);

// What an axis needs of the base, checked once for the sweep file: "" when the base has it, else
// the problem ("the base has no Dropout layer; ...").
std::string axis_needs(const std::string& axis, const nlohmann::json& base);

// Sets one value of `axis` into a model's JSON, where the spec parser will check it. Whatever
// cannot take the value (a missing or malformed part of the base) is left for the parser to name.
void apply_axis(nlohmann::json& spec, const std::string& axis, const nlohmann::json& value);

// A value as a name part or a label: a string bare, a float in its shortest form that reads back
// the same (std::to_chars: 0.001, not 0.0010000000000000000208), anything else as JSON.
std::string axis_value_text(const nlohmann::json& value);
// The model's name part for the value: the axis's prefix, then the value (hidden: h100x10).
std::string axis_name_part(const SweepAxis& axis, const nlohmann::json& value);

// The hidden axis's name part after its 'h': the widths joined by 'x' (100x10), "0" for no hidden
// layer. The CSV's hidden column writes a model's hidden layers the same way.
std::string hidden_widths_text(const std::vector<std::string>& widths);

// JSON text that stays on one printable line: control characters and DEL escaped, bad UTF-8
// replaced.
std::string escaped(const nlohmann::json& value);
// A value for a message: escaped() and cut short, since a misplaced object could be arbitrarily
// large.
std::string shown_escaped(const nlohmann::json& value);
// Whether a name is printed as it is: no control characters (the spec parser refuses them too).
bool printable(const std::string& text);
// A string for a name or a message: as it is when printable, else with its control characters
// escaped.
std::string one_line(const std::string& text);

}  // namespace mf
