"""The shipped models, as package data: ``doublet-standard.npz`` and
``doublet-acey-deucey.npz`` with their model cards (``*.md``). doublet.nn.eval finds them
with importlib.resources, so an installed wheel carries them; nothing here is code."""
