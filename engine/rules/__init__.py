"""Layer 1, rules: the legal plays of a roll in both variants (movegen, numba kernels
that yield positions, not moves), one play's single-die moves for its text (paths), and
the exact bear-off database with races' backgammon chances (bearoff). May import
doublet.core only."""
