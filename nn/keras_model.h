#pragma once
// A Keras 3 Sequential's config as a spec's model, and a spec's model as one. Keras writes it in
// three forms, all read here:
//
//   model.to_json(), a .keras file's config.json:
//     {"module": "keras", "class_name": "Sequential", "registered_name": null,
//      "config": {"name": ..., "trainable": true, "dtype": ..., "layers": [...],
//                 "build_input_shape": [null, 20]},
//      "build_config": {...}, "compile_config": {"optimizer": ..., "loss": ..., "metrics": [...],
//                                               "loss_weights": null, ...}}
//   model.get_config(): the inner "config" alone (a "compile_config" beside its layers is read too)
//
// A spec gives its model as "keras_config" (that object, or the path of a JSON file holding it) in
// place of its own input, input_shape, layers, loss, optimizer and metrics; the Python package's
// from_keras reads it through spec_from_keras. Either way the spec's reader (nn/spec.cpp and its
// parts) is the one judge of what a model may say, so the same config gives the same spec, or the
// same one-line refusal, from the command line and from Python.
#include <string>

#include <nlohmann/json.hpp>

namespace mf {

// The model part of a spec of the Keras config `config`, in to_json's form: "name", "input",
// "input_shape" (an image input flattened by a first Flatten), "layers" and, where the model was
// compiled with a loss, "loss", "optimizer" and "metrics". A UserError of one line naming `source`,
// the place and what is allowed: for a model that is not a Sequential, with trainable false, a
// layer or compile setting multifit does not have (or has only at Keras's default), or anything
// parse_model_spec refuses.
nlohmann::json spec_from_keras(const nlohmann::json& config, const std::string& source);

// The inverse: the config.json of a .keras file holding a Keras 3 Sequential of the spec
// `spec_json` (any form the spec's reader takes; its data, fit, seed and memory are multifit's
// training, not the model's, and are left out). An InputLayer of the input's shape (the spec's
// input_shape where a Flatten reads it first), the layers named as Keras names them in a fresh
// session (dense, dense_1, ...) with every setting Keras 3.15 writes, and, where the spec has a
// loss, the compile_config of its optimizer (settings Keras's defaults where not written), loss and
// metrics (those it reports: a classification loss's accuracy where it lists none). A UserError as
// parse_model_spec's, but that a spec without a loss is a model never compiled.
nlohmann::ordered_json keras_config(const nlohmann::json& spec_json, const std::string& source);

}  // namespace mf
