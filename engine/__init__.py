"""Doublet: a backgammon engine (standard backgammon and Acey-Deucey).

The package is layered; each sub-package may import only those below it (a test walks
every module's imports and fails on an upward one):

    core < rules < formats < nn < cube < search < games < training < apps

docs/architecture.md draws the layers and the path of a decision through them.
"""

__version__ = "0.1.0"
