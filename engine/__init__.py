"""Doublet: a backgammon engine (standard backgammon and Acey-Deucey)."""

__version__ = "0.1.0"
