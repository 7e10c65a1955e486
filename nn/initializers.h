#pragma once
// Keras 3's initializers (keras/src/initializers/), each one entry: its enum value, its Keras names
// and settings with their defaults (kInitializerTraits, which the spec reads and writes, Keras's
// config is written from and the help lists), and its draw in initialize(). They are drawn on the
// host from the model's seed so that every backend starts from the same numbers. The
// variance-scaling ones (glorot, he, lecun) take scale / fan, with fan = fan_in, fan_out or their
// mean (Glorot & Bengio, 2010; He et al., 2015; LeCun et al., 1998): uniform in
// +-sqrt(3 scale / fan), or normal truncated at two standard deviations (redrawn past them, as
// tf.random.truncated_normal) with stddev sqrt(scale / fan) / 0.87962566103423978, the stddev of a
// standard normal truncated at 2.
#include <cstdint>

#include "runtime/names.h"
#include "runtime/rng.h"

namespace mf {

enum class InitializerKind {
  glorot_uniform,
  glorot_normal,
  he_uniform,
  he_normal,
  lecun_uniform,
  lecun_normal,
  zeros,
  ones,
  constant,
  random_uniform,
  random_normal,
  truncated_normal
};

// An initializer and its settings, a and b: kInitializerTraits' keys, in order.
struct Initializer {
  Initializer(InitializerKind kind = InitializerKind::glorot_uniform, double a = 0, double b = 0)
      : kind(kind), a(a), b(b) {}
  InitializerKind kind;
  double a, b;
  bool operator==(const Initializer&) const = default;
};

// keras.initializers' identifiers and classes: a spec's "name" is either.
inline constexpr KerasName<InitializerKind> kInitializerNames[] = {
    {"glorot_uniform", "GlorotUniform", InitializerKind::glorot_uniform},
    {"glorot_normal", "GlorotNormal", InitializerKind::glorot_normal},
    {"he_uniform", "HeUniform", InitializerKind::he_uniform},
    {"he_normal", "HeNormal", InitializerKind::he_normal},
    {"lecun_uniform", "LecunUniform", InitializerKind::lecun_uniform},
    {"lecun_normal", "LecunNormal", InitializerKind::lecun_normal},
    {"zeros", "Zeros", InitializerKind::zeros},
    {"ones", "Ones", InitializerKind::ones},
    {"constant", "Constant", InitializerKind::constant},
    {"random_uniform", "RandomUniform", InitializerKind::random_uniform},
    {"random_normal", "RandomNormal", InitializerKind::random_normal},
    {"truncated_normal", "TruncatedNormal", InitializerKind::truncated_normal}};

// Each initializer's settings (Initializer's a and b) with Keras's defaults, and whether Keras's
// config of it holds a seed (multifit draws from the model's seed instead, nn/spec_layers.cpp).
struct InitializerTraits {
  InitializerKind kind;
  const char* keys[2];  // nullptr where it has fewer
  double defaults[2];
  bool seeded = true;
};
inline constexpr InitializerTraits kInitializerTraits[] = {
    {InitializerKind::glorot_uniform, {}, {}},
    {InitializerKind::glorot_normal, {}, {}},
    {InitializerKind::he_uniform, {}, {}},
    {InitializerKind::he_normal, {}, {}},
    {InitializerKind::lecun_uniform, {}, {}},
    {InitializerKind::lecun_normal, {}, {}},
    {InitializerKind::zeros, {}, {}, false},
    {InitializerKind::ones, {}, {}, false},
    {InitializerKind::constant, {"value"}, {0}, false},
    {InitializerKind::random_uniform, {"minval", "maxval"}, {-0.05, 0.05}},
    {InitializerKind::random_normal, {"mean", "stddev"}, {0, 0.05}},
    {InitializerKind::truncated_normal, {"mean", "stddev"}, {0, 0.05}},
};
// Initializer `kind`'s entry of kInitializerTraits.
constexpr const InitializerTraits& initializer_traits(InitializerKind kind) {
  for (const InitializerTraits& entry : kInitializerTraits)
    if (entry.kind == kind) return entry;
  return kInitializerTraits[0];  // never: every kind has its entry (a test checks)
}

// values(count) of a tensor of a layer with `fan_in` inputs and `fan_out` outputs.
void initialize(const Initializer& init, float* values, int64_t count, int fan_in, int fan_out,
                Rng& rng);

}  // namespace mf
