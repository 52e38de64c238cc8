"""doublet engine's fast path: the commonest request, a standard ``best`` at 0 or 1 ply,
read and answered in two kernels around the searcher, as bytes.

Through a pipe, a 0-ply ``best`` spent three quarters of its time in Python around a
search of about 20 us: reading the JSON, checking each key, parsing the ID, building the
reply's dict and writing it (issue 25). A request of exactly this shape::

    {"cmd": "best", "position": "<14-character gnubg Position ID>", "dice": [d1, d2],
     "ply": 0 or 1, "id": <an integer>}

("ply" and "id" optional, keys in any order, any JSON white space) is read by
``_read_best`` and its reply written by ``_write_best``; the play is the one the
searcher picks (``Searcher.chosen``, as ``doublet.search.analysis.best_play`` picks it).
Anything else (another command or key, a null, an escape in a string, an ID with a match
ID or white space, an invalid or finished position, a ply the session's defaults or the
request make 2 or more, a session with a model, time or variant set, a number that
rounds to a tie at six decimals) is left to the general path (``FastBest.reply`` returns
None), which answers it or says what is wrong. The reply is byte for byte the general
path's ``json.dumps(Session.answer(request))``: tests/test_fastpath.py checks it on
thousands of requests, and the float writer against ``repr(round(x, 6))``.
"""

from __future__ import annotations

import math

import numpy as np

from doublet.apps.protocol import ENGINE_LIMITS, Session
from doublet.core.board import MY_BAR, MY_OUT, OPP_BAR, OPP_OUT, SIZE, STANDARD, flip_into
from doublet.core.jit import njit
from doublet.formats.ids import _PID_OK, _in_play, _pid_board, _pid_key, _valid
from doublet.formats.notation import _play_text_into
from doublet.nn.eval import _equity
from doublet.search.analysis import EVALS_PER_SECOND, searcher
from doublet.search.searcher import BudgetExceeded, Limits

_QUOTE, _COLON, _COMMA, _OPEN, _CLOSE = 34, 58, 44, 123, 125
_LIST_OPEN, _LIST_CLOSE, _BACKSLASH, _MINUS, _ZERO = 91, 93, 92, 45, 48
_SPACE, _TAB, _NL, _CR = 32, 9, 10, 13

# The keys read (bits of the set seen), each as its bytes.
_CMD, _POSITION, _DICE, _PLY, _ID = 1, 2, 4, 8, 16


def _bytes(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("ascii"), np.uint8).copy()


_KEY_CMD, _KEY_POSITION, _KEY_DICE = _bytes("cmd"), _bytes("position"), _bytes("dice")
_KEY_PLY, _KEY_ID, _BEST = _bytes("ply"), _bytes("id"), _bytes("best")
_BASE64 = _bytes("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
_BASE64_VALUE = np.full(256, -1, np.int64)
_BASE64_VALUE[_BASE64] = np.arange(64)

# The reply's words between its values, in best_play's key order, as json.dumps writes them.
_W_ID = _bytes('{"id": ')
_W_PLAY_FIRST = _bytes('{"play": "')
_W_PLAY = _bytes(', "play": "')
_W_EQUITY = _bytes('", "equity": ')
_W_WIN = _bytes(', "again": false, "probabilities": {"win": ')
# the words before the other four probabilities, one after another: word j is
# _W_PROBS[_W_PROBS_AT[j]:_W_PROBS_AT[j + 1]]
_PROB_WORDS = [', "win_gammon": ', ', "win_backgammon": ', ', "lose_gammon": ',
               ', "lose_backgammon": ']  # fmt: skip
_W_PROBS = _bytes("".join(_PROB_WORDS))
_W_PROBS_AT = np.cumsum([0] + [len(w) for w in _PROB_WORDS]).astype(np.int64)
_W_PLY = _bytes('}, "ply": ')
_W_MOVER = _bytes(', "board": {"mover": [')
_W_OPPONENT = _bytes('], "opponent": [')
_W_PID = _bytes(']}, "position_id": "')
_W_END = _bytes('"}\n')
_SEP = _bytes(", ")

# fields: what _read_best read besides the board.
_F_D1, _F_D2, _F_PLY, _F_ID_LO, _F_ID_HI = range(5)
REPLY_BYTES = 1024  # a reply is under 500 bytes; an id is at most 19


# JSON's white space, and the bytes that may follow a number (white space, , ] })
_WHITE = np.zeros(256, np.bool_)
_WHITE[[_SPACE, _TAB, _NL, _CR]] = True
_AFTER_NUMBER = _WHITE.copy()
_AFTER_NUMBER[[_COMMA, _CLOSE, _LIST_CLOSE]] = True


@njit
def _skip(line, i):
    n = len(line)
    while i < n and _WHITE[line[i]]:
        i += 1
    return i


@njit
def _same(line, lo, hi, word):
    if hi - lo != len(word):
        return False
    for k in range(hi - lo):
        if line[lo + k] != word[k]:
            return False
    return True


@njit
def _string(line, i):
    """The end (the closing quote's index) of the JSON string whose opening quote is at
    i, or -1 when it is not a plain one (an escape, a control or non-ASCII byte)."""
    if i >= len(line) or line[i] != _QUOTE:
        return -1
    j = i + 1
    while j < len(line) and line[j] != _QUOTE:
        if line[j] == _BACKSLASH or line[j] < _SPACE or line[j] >= 128:
            return -1
        j += 1
    return j if j < len(line) else -1


@njit
def _digit_end(line, i):
    """Whether the number that ended before i is whole: the next byte ends a value."""
    return i < len(line) and _AFTER_NUMBER[line[i]]


@njit
def _die(line, i):
    """The die (1..6) written at i as one digit, or 0."""
    if i < len(line) and 49 <= line[i] <= 54 and _digit_end(line, i + 1):
        return line[i] - _ZERO
    return 0


@njit
def _read_best(line, default_ply, board, fields):
    """Whether line (uint8, one request) is a best request the fast path answers (see the
    module's docstring): then board (SIZE int8) holds its position (valid, in play) and
    fields its dice, ply and the span of its id's digits (-1 when it has none)."""
    n = len(line)
    fields[_F_PLY] = default_ply
    fields[_F_ID_LO] = -1
    fields[_F_ID_HI] = -1
    data = np.zeros(10, np.uint8)
    i = _skip(line, 0)
    if i >= n or line[i] != _OPEN:
        return False
    i += 1
    seen = 0
    while True:
        i = _skip(line, i)
        end = _string(line, i)
        if end < 0:
            return False
        key = 0
        if _same(line, i + 1, end, _KEY_CMD):
            key = _CMD
        elif _same(line, i + 1, end, _KEY_POSITION):
            key = _POSITION
        elif _same(line, i + 1, end, _KEY_DICE):
            key = _DICE
        elif _same(line, i + 1, end, _KEY_PLY):
            key = _PLY
        elif _same(line, i + 1, end, _KEY_ID):
            key = _ID
        if key == 0 or seen & key:
            return False
        seen |= key
        i = _skip(line, end + 1)
        if i >= n or line[i] != _COLON:
            return False
        i = _skip(line, i + 1)
        if key & (_CMD | _POSITION):
            end = _string(line, i)
            if end < 0:
                return False
            if key == _CMD:
                if not _same(line, i + 1, end, _BEST):
                    return False
            else:
                if end - i - 1 != 14:
                    return False
                bits = 0
                nbits = 0
                k = 0
                for j in range(i + 1, end):
                    v = _BASE64_VALUE[line[j]]
                    if v < 0:
                        return False
                    bits = (bits << 6) | v
                    nbits += 6
                    if nbits >= 8:
                        nbits -= 8
                        data[k] = (bits >> nbits) & 255
                        k += 1
                        bits &= (1 << nbits) - 1
            i = end + 1
        elif key == _DICE:
            if i >= n or line[i] != _LIST_OPEN:
                return False
            i = _skip(line, i + 1)
            fields[_F_D1] = _die(line, i)
            i = _skip(line, i + 1)
            if fields[_F_D1] == 0 or i >= n or line[i] != _COMMA:
                return False
            i = _skip(line, i + 1)
            fields[_F_D2] = _die(line, i)
            i = _skip(line, i + 1)
            if fields[_F_D2] == 0 or i >= n or line[i] != _LIST_CLOSE:
                return False
            i += 1
        elif key == _PLY:
            if i >= n or not (line[i] == _ZERO or line[i] == _ZERO + 1):
                return False
            if not _digit_end(line, i + 1):
                return False
            fields[_F_PLY] = line[i] - _ZERO
            i += 1
        else:  # the id: an integer as json.dumps writes it back (no "-0")
            lo = i
            if i < n and line[i] == _MINUS:
                i += 1
            first = i
            while i < n and _ZERO <= line[i] <= _ZERO + 9:
                i += 1
            digits = i - first
            if digits == 0 or digits > 18 or not _digit_end(line, i):
                return False
            if line[first] == _ZERO and (digits > 1 or first > lo):
                return False
            fields[_F_ID_LO] = lo
            fields[_F_ID_HI] = i
        i = _skip(line, i)
        if i >= n:
            return False
        if line[i] == _CLOSE:
            break
        if line[i] != _COMMA:
            return False
        i += 1
    if _skip(line, i + 1) != n or (seen & (_CMD | _POSITION | _DICE)) != _CMD | _POSITION | _DICE:
        return False
    if fields[_F_PLY] > 1:
        return False
    return _pid_board(data, board) == _PID_OK and _valid(board, STANDARD) and _in_play(
        board, STANDARD)  # fmt: skip


@njit
def _put(out, k, word):
    for j in range(len(word)):
        out[k + j] = word[j]
    return k + len(word)


@njit
def _put_int(out, k, v):
    if v < 0:
        out[k] = _MINUS
        k += 1
        v = -v
    digits = 1
    while v >= 10**digits:
        digits += 1
    for j in range(digits - 1, -1, -1):
        out[k + j] = _ZERO + v % 10
        v //= 10
    return k + digits


@njit
def _put_float6(out, k, x):
    """repr(round(x, 6)) as json.dumps writes it, after k in out; -1 when x is not finite
    or so near a tie between two sixth decimals that float64 cannot tell which (the
    general path, Python's exact decimal rounding, answers those)."""
    if not math.isfinite(x) or abs(x) >= 1e9:
        return -1
    y = abs(x) * 1e6
    whole = math.floor(y)
    frac = y - whole
    if abs(frac - 0.5) < 1e-6:
        return -1
    m = int(whole) + (1 if frac > 0.5 else 0)
    if math.copysign(1.0, x) < 0:
        out[k] = _MINUS
        k += 1
    if m == 0:
        out[k] = _ZERO
        out[k + 1] = 46  # .
        out[k + 2] = _ZERO
        return k + 3
    if m < 100:  # below 1e-4: repr writes an exponent, as 5e-05 or 1.2e-05
        if m < 10:
            out[k] = _ZERO + m
            k += 1
            exp = 6
        else:
            out[k] = _ZERO + m // 10
            k += 1
            if m % 10:
                out[k] = 46
                out[k + 1] = _ZERO + m % 10
                k += 2
            exp = 5
        out[k] = 101  # e
        out[k + 1] = _MINUS
        out[k + 2] = _ZERO
        out[k + 3] = _ZERO + exp
        return k + 4
    k = _put_int(out, k, m // 1_000_000)
    out[k] = 46
    k += 1
    rest = m % 1_000_000
    if rest == 0:
        out[k] = _ZERO
        return k + 1
    width = 6
    while rest % 10 == 0:
        rest //= 10
        width -= 1
    for j in range(width - 1, -1, -1):
        out[k + j] = _ZERO + rest % 10
        rest //= 10
    return k + width


@njit
def _write_best(line, fields, before, after, again, probs, ply, out):
    """The best reply (best_play's keys, json.dumps's bytes, a newline) of the play from
    before to after into out: its length, or -1 when the general path must write it."""
    if again:
        return -1
    text = np.empty(64, np.uint8)
    n_text = _play_text_into(before, after, fields[_F_D1], fields[_F_D2], text)
    if n_text < 0:
        return -1
    flipped = np.empty(SIZE, np.int8)
    flip_into(after, flipped)
    key = np.empty(10, np.uint8)
    if _pid_key(flipped, key) > 80:
        return -1
    k = 0
    if fields[_F_ID_LO] >= 0:
        k = _put(out, k, _W_ID)
        for j in range(fields[_F_ID_LO], fields[_F_ID_HI]):
            out[k] = line[j]
            k += 1
        k = _put(out, k, _W_PLAY)
    else:
        k = _put(out, k, _W_PLAY_FIRST)
    for j in range(n_text):
        out[k + j] = text[j]
    k = _put(out, k + n_text, _W_EQUITY)
    p = np.empty(5, np.float64)
    for j in range(5):
        p[j] = probs[j]
    k = _put_float6(out, k, _equity(p))
    if k < 0:
        return -1
    k = _put(out, k, _W_WIN)
    k = _put_float6(out, k, p[0])
    for j in range(4):
        if k < 0:
            return -1
        for c in range(_W_PROBS_AT[j], _W_PROBS_AT[j + 1]):
            out[k] = _W_PROBS[c]
            k += 1
        k = _put_float6(out, k, p[j + 1])
    if k < 0:
        return -1
    k = _put(out, k, _W_PLY)
    k = _put_int(out, k, ply)
    k = _put(out, k, _W_MOVER)
    for i in range(26):  # doublet.core.board.counts: each side in its own numbering
        if i == 0:
            v = after[MY_OUT]
        elif i == 25:
            v = after[MY_BAR]
        else:
            v = max(after[i], 0)
        if i:
            k = _put(out, k, _SEP)
        k = _put_int(out, k, v)
    k = _put(out, k, _W_OPPONENT)
    for i in range(26):
        if i == 0:
            v = after[OPP_OUT]
        elif i == 25:
            v = -after[OPP_BAR]
        else:
            v = max(-after[25 - i], 0)
        if i:
            k = _put(out, k, _SEP)
        k = _put_int(out, k, v)
    k = _put(out, k, _W_PID)
    for j in range(14):  # base64 of the key's 80 bits, the first 14 characters
        bit = 6 * j
        v = 0
        for b in range(bit, bit + 6):
            byte = b >> 3
            v <<= 1
            if byte < 10:
                v |= (key[byte] >> (7 - (b & 7))) & 1
        out[k + j] = _BASE64[v]
    return _put(out, k + 14, _W_END)


class FastBest:
    """The fast path of one protocol Session (doublet engine's): reply(line) is the
    reply's bytes, or None when the general path must answer the line."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.serves = session.bounds == ENGINE_LIMITS
        self.board = np.empty(SIZE, np.int8)
        self.fields = np.zeros(5, np.int64)
        self.out = np.empty(REPLY_BYTES, np.uint8)
        # ply 1 is bounded by a count of evaluations, as best_play bounds it (deepen)
        self.max_evals = (0, max(1, int(session.bounds.default_time / 2 * EVALS_PER_SECOND)))
        self.limits = (Limits(ply=0), Limits(ply=1))

    def reply(self, raw: bytes) -> bytes | None:
        d = self.session.defaults
        if not self.serves or d["model"] is not None or d["time"] is not None or (
                d["variant"] is not None) or not isinstance(d["ply"], int):  # fmt: skip
            return None
        line = np.frombuffer(raw, np.uint8)
        if not _read_best(line, d["ply"], self.board, self.fields):
            return None
        f = self.fields
        ply = int(f[_F_PLY])
        s = searcher(None, STANDARD)
        d1, d2 = int(f[_F_D1]), int(f[_F_D2])
        try:
            after, again, probs, plied = s.chosen(self.board, d1, d2, self.limits[ply],
                                                  self.max_evals[ply])  # fmt: skip
        except BudgetExceeded:
            return None
        n = _write_best(line, f, self.board, after, again, probs, plied, self.out)
        return self.out[:n].tobytes() if n > 0 else None


__all__ = ["FastBest"]
