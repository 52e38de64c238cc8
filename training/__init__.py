"""Layer 7, doublet.training: self-play TD(lambda) training of Doublet's nets (torch), the
distillation to search and rollout values, the pruning net, and the export of models.

It may import every engine layer up to games; nothing below it imports it (the apps
layer's `doublet train` starts it in a process of its own). torch is imported here and
only here, so playing and analysing need numpy and numba alone.
"""
