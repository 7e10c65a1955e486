"""keras.models: Sequential and load_model."""
from .. import load_model
from ..models import Sequential

__all__ = ["Sequential", "load_model"]
