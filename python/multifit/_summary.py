"""model.summary() as Keras 3 prints it: a row per layer (its name and class, output shape, number of
parameters) and the totals, trainable and not (a BatchNormalization's moving statistics), with
their size in float32 bytes. Once its optimizer is built, Keras also counts the optimizer's state
("Optimizer params"); this summary leaves it out, as Keras's of an untrained model does."""
import itertools
import math
import re
import textwrap

# Keras's Sequential summary: the three columns' inner widths, and its box-drawing characters
_WIDTHS = (31, 22, 13)


def _row(cells, left, middle, right, align=("<", "<", ">")):
    """The row's lines: each cell wrapped at spaces to its column's width, as Keras's table wraps it."""
    wrapped = [textwrap.wrap(str(c), w) or [""] for c, w in zip(cells, _WIDTHS)]
    return [left + middle.join(f" {c:{a}{w}} " for c, a, w in zip(line, align, _WIDTHS)) + right
            for line in itertools.zip_longest(*wrapped, fillvalue="")]


def _rule(left, middle, right, fill):
    return left + middle.join(fill * (w + 2) for w in _WIDTHS) + right


def _size(params):
    """keras.src.utils.summary_utils.readable_memory_size of float32 parameters."""
    size = params * 4.0
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.2f} {unit}"
        size /= 1024


def snake_case(name):
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def layer_rows(layers, input_shape):
    """(name (type), output shape, trainable params, non-trainable params) of each layer after the
    input of `input_shape`: a Dense's kernel and bias, a BatchNormalization's gamma and beta (where
    it scales and centers) and its moving mean and variance."""
    counts, rows, shape = {}, [], tuple(input_shape)
    for layer in layers:
        kind, config = layer.kind, layer.get_config()
        if kind == "InputLayer":
            continue
        trainable = frozen = 0
        if kind == "Dense":
            units = config["units"]
            trainable = math.prod(shape) * units + (units if config.get("use_bias", True) else 0)
            shape = (units,)
        elif kind == "BatchNormalization":
            trainable = shape[-1] * sum(bool(config.get(key, True)) for key in ("scale", "center"))
            frozen = 2 * shape[-1]
        elif kind == "Flatten":
            shape = (math.prod(shape),)
        base = layer.name or snake_case(kind)
        counts[base] = counts.get(base, -1) + 1
        name = base if counts[base] == 0 or layer.name else f"{base}_{counts[base]}"
        rows.append((f"{name} ({kind})", "(None, " + ", ".join(map(str, shape)) + ")", trainable, frozen))
    return rows


def summary_text(model_name, rows):
    lines = [f'Model: "{model_name}"', _rule("┏", "┳", "┓", "━"),
             *_row(("Layer (type)", "Output Shape", "Param #"), "┃", "┃", "┃"), _rule("┡", "╇", "┩", "━")]
    for i, (name, shape, trainable, frozen) in enumerate(rows):
        if i:
            lines.append(_rule("├", "┼", "┤", "─"))
        lines += _row((name, shape, f"{trainable + frozen:,}"), "│", "│", "│")
    lines.append(_rule("└", "┴", "┘", "─"))
    trainable, frozen = sum(r[2] for r in rows), sum(r[3] for r in rows)
    lines += [f" Total params: {trainable + frozen:,} ({_size(trainable + frozen)})",
              f" Trainable params: {trainable:,} ({_size(trainable)})",
              f" Non-trainable params: {frozen:,} ({_size(frozen)})"]
    return "\n".join(lines)
