"""multifit with the tools that drive sweeps: optuna (multifit.integration.optuna)."""
