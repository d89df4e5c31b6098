"""A random source that counts its raw 64-bit draws (for tests of how much randomness a sampler uses)."""

import numpy as np
from randomgen import UserBitGenerator


class Counted:
    """``generator``: a numpy Generator over PCG64(seed) whose every raw 64-bit draw is counted in ``count``."""

    def __init__(self, seed: int):
        self._source = np.random.PCG64(seed)
        self.count = 0
        self.generator = np.random.Generator(UserBitGenerator(self._next, 64))

    def _next(self, _=None) -> int:
        self.count += 1
        return int(self._source.random_raw())
