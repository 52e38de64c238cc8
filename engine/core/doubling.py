"""Who may double: the one statement of the rule, read by the cube state (play, analysis)
and by the position formats that say a double was offered (an XGID's 'D', a gnubg Match
ID's doubled bit), each of which words the refusal in its own fields.

>>> double_barred(crawford=False, opponent_owns=False, value=2)
>>> double_barred(crawford=False, opponent_owns=True, value=2)
'owner'
"""

from __future__ import annotations

MAX_CUBE_EXPONENT = 15  # the largest cube: 32768, far past any real game
MAX_CUBE = 1 << MAX_CUBE_EXPONENT


def double_barred(crawford: bool, opponent_owns: bool, value: int,
                  limit: int = MAX_CUBE) -> str | None:  # fmt: skip
    """Why the side on roll may not double (or redouble) a cube at `value`, or None: it
    is the Crawford game ("crawford"), the opponent owns the cube ("owner"), or a double
    would pass the largest cube, `limit` ("largest"), in that order."""
    if crawford:
        return "crawford"
    if opponent_owns:
        return "owner"
    if 2 * value > limit:
        return "largest"
    return None


__all__ = ["MAX_CUBE", "MAX_CUBE_EXPONENT", "double_barred"]
