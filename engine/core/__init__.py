"""Layer 0, core: the one board representation (board), the errors every layer raises
(errors), the dice (dice: the 21 rolls and every seeded stream), numba's options and disk
cache (jit) and atomic file writes (files). It imports nothing of Doublet's."""
