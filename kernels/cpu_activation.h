#pragma once
// The CPU loops' dispatch on an activation: with_activation(act, body) calls
// body(std::integral_constant<Activation, A>) for the runtime `act`, so each loop is compiled for
// one activation: the switch in the element math folds away and relu's select vectorizes instead of
// branching on the sign of random data. Inlined into its callers, so that each of their clones
// (kernels/cpu_clones.h) compiles the loop for its CPU.
#include <cstdint>
#include <type_traits>
#include <utility>

#include "kernels/element_math.h"

namespace mf::cpu {

template <class Body, int... Kinds>
[[gnu::always_inline]] inline void with_one_of(Activation act, Body body,
                                               std::integer_sequence<int, Kinds...>) {
  ((int(act) == Kinds ? (body(std::integral_constant<Activation, Activation(Kinds)>()), true)
                      : false) ||
   ...);
}

// Every activation of kernels/activations.h, each its own instantiation.
template <class Body>
[[gnu::always_inline]] inline void with_activation(Activation act, Body body) {
  with_one_of(act, body, std::make_integer_sequence<int, kActivationCount>());
}

// d[i] = t.apply(d[i], first + i) for i < count: a gradient through an activation, from its
// buffers' elements [first, first + count). In place as a loop of its own: the vectorizer's overlap
// check would send a copy loop to the scalar path.
[[gnu::always_inline]] inline void through_in_place(const Through& t, float* d, int64_t first,
                                                    int64_t count) {
  if (!t.any()) return;
  with_activation(t.act, [&](auto a) {
    const float* y = t.y + first;
    const float* z = t.z ? t.z + first : nullptr;
    for (int64_t i = 0; i < count; ++i) d[i] *= activation_grad(a, y[i], z ? z[i] : 0.f);
  });
}

}  // namespace mf::cpu
