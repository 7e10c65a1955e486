"""keras.models: Sequential, load_model and clone_model."""
import copy as _copy

from .. import load_model
from ..models import Sequential

__all__ = ["Sequential", "load_model", "clone_model"]


def clone_model(model):
    """keras.models.clone_model of a Sequential: the same layers, not compiled, with weights drawn
    anew from the model's seed (its initial weights, not those it has learned)."""
    if not isinstance(model, Sequential):
        raise TypeError(f"clone_model: {type(model).__name__} is not a Sequential")
    return Sequential(_copy.deepcopy(model._layers), seed=model.seed)
