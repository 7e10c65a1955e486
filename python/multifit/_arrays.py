"""numpy arrays as the binding takes them: float32, C-contiguous, 2-D rows.

An array that already is one is passed as it is (the binding borrows its buffer; on the cpu backend
a fit reads it in place). Any other numeric array is converted once, here, by numpy.
"""
import numpy as np


def as_rows(array, name, ndims=(2,)):
    """`array` as a float32 C-contiguous numpy array of one of `ndims` dimensions.

    Raises TypeError for what is not numeric (strings, objects), ValueError for a wrong number of
    dimensions, naming `name` and the shape.
    """
    a = np.asarray(array)
    if a.dtype == np.float32 and a.flags.c_contiguous and a.ndim in ndims:
        return a
    if not (np.issubdtype(a.dtype, np.number) or a.dtype == np.bool_):
        raise TypeError(f"{name} has dtype {a.dtype}; expected numbers (float32, or any numeric dtype, "
                        f"converted to float32 once)")
    if a.ndim not in ndims:
        wanted = " or ".join(f"{n}-D" for n in ndims)
        raise ValueError(f"{name} has shape {a.shape}; expected a {wanted} array")
    return np.ascontiguousarray(a, dtype=np.float32)


def features_and_targets(x, y):
    """(x as rows of features, y as labels): x 2-D (a batch of images is flattened, as Keras's
    Flatten would), y 1-D or 2-D. Raises TypeError or ValueError as as_rows does."""
    x = np.asarray(x)
    if x.ndim > 2:
        x = x.reshape(x.shape[0], -1)
    x, y = as_rows(x, "x"), as_rows(y, "y", ndims=(1, 2))
    if len(x) == 0:
        raise ValueError(f"x has no rows (shape {x.shape}); give at least one sample")
    return x, y
