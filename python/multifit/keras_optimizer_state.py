"""multifit's optimizer state <-> Keras 3's `optimizer.variables`, the list a `.keras` file (and a
"NAME.weights.h5" file) holds as "optimizer/vars/0", "/1", ... in this order (Keras 3.15.1):

    iteration          int64 scalar: the steps taken
    learning_rate      float32 scalar: the rate now; absent where the rate is a schedule
    the slots          per trainable variable (Keras's trainable_variables order: a Dense's kernel
                       and bias, a BatchNormalization's gamma and beta), in groups: the slots an
                       optimizer adds together are interleaved variable by variable (Adam's
                       momentum and velocity: kernel m, kernel v, bias m, bias v, ...), one group
                       after the other (amsgrad's velocity_hat, SGD's and RMSprop's momentum,
                       RMSprop's average_gradient: a group each)
    Nadam's u_product  float32 scalar, last

multifit keeps the same slots in the same order (nn/settings.h optimizer_slots), each one flat over
the parameters in Keras's trainable order, so only the grouping is Keras's alone.
"""
import warnings

import numpy as np

# The slots each optimizer adds as its first group (keras/src/optimizers/*.py build()); every slot
# after them is a group of its own.
_FIRST_GROUP = {"adam": 2, "adamw": 2, "adamax": 2, "nadam": 2, "rmsprop": 1, "adagrad": 1, "lion": 1, "sgd": 0}


def _slot_groups(state):
    """The sizes of Keras's groups of `state`'s slots."""
    first = _FIRST_GROUP[state["optimizer"]]
    return ([first] if first else []) + [1] * (len(state["slots"]) - first)


def keras_variables(state, trainable_shapes):
    """Keras's optimizer.variables of `state` (Session.optimizer_state()) on a model whose trainable
    variables have `trainable_shapes`."""
    variables = [np.array(state["iterations"], np.int64)]
    if state["learning_rate"] is not None:
        variables.append(np.array(state["learning_rate"], np.float32))
    sizes = [int(np.prod(shape)) for shape in trainable_shapes]
    ends = np.cumsum(sizes, dtype=np.int64)
    per_variable = [[flat[end - size:end].reshape(shape) for end, size, shape in zip(ends, sizes, trainable_shapes)]
                    for flat in state["slots"]]
    at = 0
    for size in _slot_groups(state):
        for i in range(len(trainable_shapes)):
            variables.extend(slot[i] for slot in per_variable[at:at + size])
        at += size
    if state["optimizer"] == "nadam":
        variables.append(np.array(state["nadam_product"], np.float32))
    return variables


def state_from_keras(template, trainable_shapes, variables, who):
    """The state Session.set_optimizer_state takes of Keras's optimizer.variables, for a model whose
    state now is `template` (Session.optimizer_state(): its optimizer, slots and whether its rate is a
    variable); None where the variables are not this optimizer's (another optimizer's, or only the
    iteration and rate of one Keras had not built: a model saved before its first fit): then, as
    Keras does, the optimizer starts afresh, with a warning naming `who`."""
    rate_variables = 0 if template["learning_rate"] is None else 1
    nadam = 1 if template["optimizer"] == "nadam" else 0
    groups = _slot_groups(template)
    slot_shapes = [tuple(shape) for size in groups for shape in trainable_shapes for _ in range(size)]
    expected = [()] * (1 + rate_variables) + slot_shapes + [()] * nadam
    if [tuple(np.shape(v)) for v in variables] != expected:
        warnings.warn(f"{who}: skipping the optimizer's state: the file holds {len(variables)} variables "
                      f"whereas this model's {template['optimizer']} has {len(expected)} (of other shapes or "
                      f"settings); it starts afresh", stacklevel=3)
        return None
    count, slots, at = len(trainable_shapes), [], 1 + rate_variables
    for size in groups:
        for k in range(size):
            parts = [np.asarray(variables[at + i * size + k], np.float32).ravel() for i in range(count)]
            slots.append(np.concatenate(parts) if parts else np.zeros(0, np.float32))
        at += size * count
    return {"optimizer": template["optimizer"], "iterations": int(np.asarray(variables[0])), "slots": slots,
            "nadam_product": float(np.asarray(variables[-1])) if nadam else 1.0,
            "learning_rate": float(np.asarray(variables[1])) if rate_variables else None}
