"""Layer 0, core: the one board representation (board), the errors every layer raises
(errors), the dice (dice: the 21 rolls and every seeded stream), numba's options and disk
cache (jit), atomic file writes (files), who may double (doubling) and where independent
tasks run: this process, local processes or Ray (parallel). It imports nothing of
Doublet's."""
