"""The errors Doublet raises for bad input. Each one's message says what is wrong."""


class DoubletError(ValueError):
    """Base class: bad input from a user, with a message meant for that user."""


class InvalidPositionError(DoubletError):
    """A position ID, XGID or JSON board that is malformed or cannot arise."""


class NotationError(DoubletError):
    """Play text that does not parse (e.g. ``24/x``)."""


class IllegalPlayError(DoubletError):
    """Play text that parses but is not a legal play of the roll in the position."""


class InvalidDiceError(DoubletError):
    """Dice out of 1..6 or not two of them."""
