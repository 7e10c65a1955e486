"""keras.saving: load_model of a `.keras` file."""
from .. import load_model

__all__ = ["load_model"]
