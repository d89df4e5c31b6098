"""Inference after a private release: confidence intervals for the population and hypothesis tests whose
p-values account for the noise added."""

__all__: list[str] = []
