"""Layer 1, rules: the legal plays of a roll in both variants (movegen, numba kernels
that yield positions, not moves) and the exact bear-off database (bearoff). May import
doublet.core only."""
