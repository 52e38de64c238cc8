"""`doublet play`: money sessions and matches against the engine in the terminal.

The person is side 0 of an `doublet.games.game.Series` and plays X, moving down to point 1 at
the bottom right of the board; the engine, Doublet, is side 1 and plays O. Points are
always numbered from the person's side, the engine's plays too: its checkers move up,
from 1 to 24 (``Doublet rolls 4-3: 1/5 12/15``; doublet.formats.notation.other_side).

What is played: a money session with the cube (the default; ``--games N``, the Jacoby
rule on unless ``--no-jacoby``, ``--beavers``), a match to N points (``--match N``, the
Crawford rule, then post-Crawford play), or games without the cube (``--no-cube``). The
header shows the game, the match and its score and "Crawford game" / "post-Crawford";
the cube is drawn beside its owner's row (``[cube 2]``) or, centred, under the board.

A turn of the person:

0. When the person may double (the cube centred or theirs, not the Crawford game, not
   the first roll of a game): ``Roll or double (Enter rolls):``. Enter (roll) rolls;
   ``double`` offers the cube, and the engine takes, beavers or passes by its cube
   decision (doublet.games.opponent). ``hint`` gives the cube decision at the engine's
   depth with the loss of each action.
1. The board (both sides' checkers, bar, borne off, unentered checkers in Acey-Deucey,
   pip counts, score), then ``Position ID: <gnubg ID>`` (standard) or ``Position: <JSON
   board>`` (Acey-Deucey), seen by the person on roll, then ``You rolled 3-1.``
2. At ``Your play:`` the person types a play in the usual notation (parsed by
   doublet.formats.notation: any order of parts, chains, counts, ``in/22``, Acey-Deucey's
   ``... then 6-6: ...``) or a command (`HELP` below). A play that does not parse gets
   ``Malformed play: ...``, one that is not legal ``Illegal play: ...``. ``hint`` ranks
   the plays as the engine does (cubeful equity in a game with the cube), with the loss
   of each against the best.
3. After a legal play the board after it is shown and ``Enter confirms, undo takes it
   back:``. Enter (or y, yes, ok) plays it and the engine moves; ``undo`` returns to
   step 1 with the same dice; ``quit`` saves the game as it was before the play; another
   legal play, or ``resign``, takes the play back and is done as typed at step 1;
   ``help``, ``hint``, ``board`` and ``export`` are answered and the question asked
   again.
4. With no legal play: ``No legal play. Enter to pass:``.

When the engine doubles (by its cube decision before its roll): ``Doublet doubles to 2.
Take or pass?`` (``take``, ``pass`` or ``drop``, ``beaver`` where allowed, ``hint``).
``resign [gammon|backgammon]`` asks the person to confirm; the engine accepts only a
resignation worth at least as much to it as playing on (doublet.games.opponent
.resignation) and otherwise says what playing on is worth to it. A result scores the
cube times the kind (a gammon counts 1 under the Jacoby rule with the cube not turned).

The engine's turns are one line each: ``Doublet rolls 6-4: 1/11``. The game is saved
atomically (`Series.save`: the score, the cube's value and owner, a double waiting for
an answer, the earlier games) after every turn and every cube action, so that even a
kill -9 loses at most the turn being played; `quit`, end of input (Ctrl-D, or the end of
piped input), Ctrl-C, a closed terminal (SIGHUP), SIGTERM and an engine error save it
too and say where; ``doublet play --resume`` continues it with the same position and
dice. A play not yet confirmed is not saved. Starting a new game where a saved one lies
keeps the old one beside it (``game.previous.json``, or the first free
``game.previous-N.json`` when that one holds a game already: no saved game is
overwritten; a save in which nothing was played yet is simply replaced). While a session
runs it holds a lock on its save (a file ``game.json.lock`` beside it, released when the
process ends, even by kill -9): a second ``doublet play`` on the same save is refused.
A finished series deletes a save file that this session resumed from or wrote. Piped
input is echoed after each prompt, so that the output reads like a terminal session.
``--export FILE.mat`` (re)writes the whole match or session as a .mat match file after
every game (doublet.games.record; GNU Backgammon and eXtreme Gammon import it), and
``FILE.sgf`` as GNU Backgammon's SGF; another name gets each game's text record. The
save keeps the name: ``--resume`` goes on writing it (``--resume --export OTHER`` moves
it).

Engine depth, measured on this project's 2-core machine with a training run on the other
core: standard backgammon searches at 2 ply by default (0.13 s a move on average, 1.1 s
at most over 200 moves; 1 ply 0.005 s, 3 ply 3 s). Acey-Deucey searches at most 1 ply
(0.06 s on average, 2.2 s at most over 560 moves; 2 ply takes 4 s on average and up to
47 s), and a 1-2 at 0 ply: a 1-2 can have over 800,000 plays, and writing the chosen one out
takes most of the time (0.2 s on average, 6 s at most).
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import io
import os
import re
import shlex
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from doublet.core import board as B
from doublet.core.board import ACEY_DEUCEY, STANDARD
from doublet.core.dice import MAX_GAME_SEED
from doublet.core.errors import DoubletError, IllegalPlayError, NotationError, shown
from doublet.core.files import (
    atomic_open,
    file_path_error,
    held_lock,
    missing_folder,
    remove_temps,
    write_error,
)
from doublet.core.jit import EVAL_KERNELS, SEARCH_KERNELS, announce_compile
from doublet.formats.notation import format_play, other_side
from doublet.formats.position import Play, Position
from doublet.games.game import (
    DEAD_CUBE_NOTE,
    FORMAT,
    NO_RESIGN_NOW,
    RESULT_NAMES,
    Series,
    held_while_changing,
)
from doublet.games.opponent import (
    engine_answer,
    engine_doubles,
    engine_play,
    resignation,
)
from doublet.games.record import MAT_IS_STANDARD, MATCH_FILES
from doublet.search.analysis import cube_document, diagram, play_equities, searcher
from doublet.search.choice import (
    ACEY_DEUCEY_MAX_PLY,
    DEFAULT_PLY,
    MAX_PLAY_PLY,
    engine_depth,
    ranking,
)
from doublet.search.cubeful import check_ply
from doublet.search.searcher import Limits

if TYPE_CHECKING:
    from doublet.games.game import Game

PERSON, ENGINE = 0, 1
NAMES = ("you", "Doublet")
RECORD_NAMES = ("person", "Doublet")  # in exported records ("you wins" would read badly)
HINT_PLAYS = 5
CONFIRM = {"", "y", "yes", "ok"}
RESIGN = {"": 1, "single": 1, "gammon": 2, "backgammon": 3}
ANSWERS = {"take": "take", "t": "take", "pass": "pass", "drop": "pass", "p": "pass",
           "beaver": "beaver"}  # fmt: skip

HELP = """\
Type your play in the usual notation, points numbered from your side (you are X and
move down to point 1, bottom right):
  13/7 8/7    bar/20*    6/off    8/5(2)    24/18/13    (parts in any order; the * of a
  hit is optional; a checker that moves on can be written 13/5 or 13/8/5)
  Acey-Deucey: in/22 enters a checker; a 1-2 is written whole, the 1 and the 2, then
  the doublet you choose: 'in/24 in/23 then 6-6: in/19(2) 24/18 23/17'
The engine's plays are written in your numbering too (its checkers move up, 1 to 24).
Commands:
  roll (or Enter)               roll the dice, when you may double first
  double                        double (redouble) before your roll; Doublet takes or passes
  take, pass (drop), beaver     answer Doublet's double (beaver: money play with beavers)
  hint                          before your roll: the cube decision; after it: Doublet's
                                best plays for your roll, with equity, loss and chances
  undo                          take back your play before you confirm it
  board                         show the board again
  resign [gammon|backgammon]    offer to give up this game for 1 (2, 3) times the cube;
                                you are asked to confirm, and Doublet accepts only when
                                that is worth at least as much to it as playing on
  export FILE                   write the record: FILE.mat the match file (gnubg and
                                eXtreme Gammon import it), FILE.sgf as gnubg's SGF,
                                any other name this game's text
  help                          this text
  quit                          save the game and leave (doublet play --resume goes on)
After your play, Enter confirms it and undo takes it back; another play typed then
replaces it; a command is answered and the play waits (a resignation accepted ends
the game)."""


def default_save_path() -> Path:
    """$XDG_DATA_HOME/doublet/game.json, else ~/.local/share/doublet/game.json."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "doublet" / "game.json"


class Quit(Exception):
    """The person leaves: `quit`, end of input (status 0), a hang-up or SIGTERM (status
    128 + the signal's number, as a shell reports a process the signal ended; Ctrl-C is
    KeyboardInterrupt, 130)."""

    def __init__(self, status: int = 0) -> None:
        super().__init__(status)
        self.status = status


def _refused(e: DoubletError) -> str:
    """A typed play's refusal as said at "Your play:" and at the confirmation: Malformed,
    Illegal or Ambiguous play, and why."""
    kind = "Malformed"
    if isinstance(e, IllegalPlayError):
        kind = "Ambiguous" if "ambiguous" in str(e) else "Illegal"
    return f"{kind} play: {e}"


def _hang_up(signum: int, frame: Any) -> None:
    raise Quit(128 + signum)


class Session:
    """One run of `doublet play`: reads lines from `inp`, writes the screen to `out`."""

    def __init__(
        self,
        series: Series,
        ply: int,
        save_path: Path,
        export_path: Path | None,
        inp: TextIO,
        out: TextIO,
        resumed: bool = False,
    ) -> None:
        self.series = series
        self.ply = ply
        self.save_path = save_path
        self.export_path = export_path
        self.inp = inp
        self.out = out
        self.echo = not inp.isatty()  # piped input: show what was read, like a terminal
        self.owns_save = resumed  # the save file holds this series (delete it at the end)
        self.save_failed = False  # said once: autosaves that fail do not stop the game
        # A resumed save whose game had ended: its text record may be written already.
        self.ended_before = resumed and series.game.over

    @property
    def game(self) -> Game:
        return self.series.game

    # -- input and output ---------------------------------------------------------------
    def say(self, text: str = "", end: str = "\n") -> None:
        self.out.write(text + end)
        self.out.flush()

    def ask(self, prompt: str) -> str:
        """One line of input, stripped; Quit at the end of input."""
        self.say(prompt, end="")
        line = self.inp.readline()
        if not line:
            self.say()
            raise Quit
        if self.echo:
            self.say(line.rstrip("\n"))
        return line.strip()

    # -- the screen ---------------------------------------------------------------------
    def show(self, board: Any, dice: tuple[int, int] | None = None) -> None:
        """The board seen by the person (X), the sides' counts, the score and, on the
        person's turn, the position and the dice."""

        grid = diagram(board).split("\n")[:-1]  # the last line is replaced below
        mine, theirs = B.pip_counts(board)
        rows = [
            ("O", NAMES[ENGINE], int(theirs), B.OPP_OFF, B.OPP_BAR, B.OPP_OUT),
            ("X", NAMES[PERSON], int(mine), B.MY_OFF, B.MY_BAR, B.MY_OUT),
        ]
        g = self.game
        owner = {-1: None, PERSON: "X", ENGINE: "O"}[g.owner]
        for mark, name, pips, off, bar, out in rows:
            line = f" {mark}  {name:<8} pips {pips:3d}  off {int(board[off]):2d}"
            if board[bar]:
                line += f"  on the bar {abs(int(board[bar]))}"
            if self.game.variant == B.ACEY_DEUCEY:
                line += f"  not entered {int(board[out])}"
            if g.rules.cube and owner == mark:
                line += f"  [cube {g.cube}]"
            grid.append(line)
        if g.rules.cube and owner is None:
            grid.append(f"     [cube {g.cube}, centred]")
        grid.append(f" {self.score_text()}")
        self.say("\n" + "\n".join(grid))
        if dice is not None:
            if self.game.variant == B.STANDARD:
                self.say(f"Position ID: {self.game.describe()}")
            else:
                self.say(f"Position: {self.game.describe()}")
            self.say(f"You rolled {max(dice)}-{min(dice)}.")  # the higher first, as written

    def score_text(self) -> str:
        s = self.series
        of = f" of {s.games}" if s.games else ""
        match = f" of a {s.length}-point match" if s.length else ""
        state = s.game_state_text()
        return (
            f"Game {self.game.number + 1}{of}{match}, score: {NAMES[PERSON]} "
            f"{s.score[PERSON]}, {NAMES[ENGINE]} {s.score[ENGINE]}"
            + (f" ({state})" if state else "")
        )

    def game_start(self) -> None:
        """Who starts the game now beginning, and with which dice."""

        g = self.game
        self.say(f"\n=== {self.score_text()} ===")
        if g.rules.crawford:
            self.say("The Crawford game: nobody may double in it.")
        self.say_dead_cube()
        d = g.dice
        assert d is not None
        if g.opening:
            first = "You start" if g.turn == PERSON else "Doublet starts"
            how = "with" if g.variant == STANDARD else "and rolls" if g.turn else "and roll"
            # Standard plays the opening throw's two dice, in its order; Acey-Deucey's new
            # roll is written as every roll is, the higher first ("You rolled 5-2" follows).
            shown = d if g.variant == STANDARD else (max(d), min(d))
            self.say(
                f"Opening throw: {NAMES[PERSON]} {g.opening[PERSON]}, "
                f"{NAMES[ENGINE]} {g.opening[ENGINE]}. {first} {how} {shown[0]}-{shown[1]}."
            )
        elif g.number == 0:
            self.say(
                f"{NAMES[g.turn].capitalize()} {'have' if g.turn == PERSON else 'has'} "
                f"the first throw."
            )
        else:
            self.say(
                f"{NAMES[g.turn].capitalize()} won the last game by a single game and "
                f"{'have' if g.turn == PERSON else 'has'} the first throw."
            )

    # -- the game -----------------------------------------------------------------------
    def run(self) -> int:

        s = self.series
        depth = f"{self.ply} ply"
        if s.variant == ACEY_DEUCEY:
            depth = (
                f"{min(self.ply, ACEY_DEUCEY_MAX_PLY)} ply (a 1-2 at 0 ply: it can have "
                f"over 800,000 plays)"
            )
        if s.length:
            what = s.describe()
        else:
            what = f"{s.games or 'any number of'} game{'s' * (s.games != 1)}"
            if s.cube:
                what += " for money with the cube" + (", Jacoby" if s.jacoby else "") + (
                    ", beavers" if s.beavers else "")  # fmt: skip
        # The seed gives every roll to come: said when the person chose it, else at the
        # end, resumed or not (the save records which it was; a review: a random seed on
        # the first line told the dice in advance).
        seed = f", seed {s.seed}" if s.seed_chosen else ""
        self.say(
            f"Doublet: {'Acey-Deucey' if s.variant == ACEY_DEUCEY else 'standard backgammon'}, "
            f"{what}{seed}; the engine plays at {depth}. Type help for the commands."
        )
        if self.owns_save:
            self.say(f"Resuming the game saved in {self.save_path}: {self.score_text()}.")
            self.say_dead_cube()
        try:
            if not self.owns_save:
                self.game_start()
                self.autosave()
            while True:
                if self.game.over:
                    self.game_over()
                    if self.series.over:
                        return self.series_over()
                    self.series.next_game()
                    self.game_start()
                elif self.game.phase == "answer":  # the doubler is the side on roll
                    if self.game.turn == ENGINE:
                        self.answer_double()
                    else:  # the person's double, saved before Doublet answered it
                        self.engine_answers()
                elif self.game.turn == ENGINE:
                    self.engine_turn()
                elif self.game.phase == "roll":
                    self.person_roll()
                else:
                    self.person_turn()
                self.autosave()
        except Quit as q:
            return self.save_and_leave(q.status)
        except KeyboardInterrupt:
            return self.save_and_leave(128 + signal.SIGINT)
        except DoubletError:
            self.save_and_leave()  # the game so far is kept; the error is said after it
            raise

    def engine_turn(self) -> None:
        """The engine doubles or rolls, then plays; its play is written in the person's
        numbering."""
        g = self.game
        if g.phase == "roll":
            if engine_doubles(g, self.cube_ply()):
                g.double()  # the person answers at the next step (answer_double)
                return
            g.roll()
        assert g.dice is not None
        d = g.dice
        depth = engine_depth(g.variant, self.ply, d)
        # The line is written whole once the play is chosen (a compile notice on stderr
        # cut it in two: a review), but the dice first where the search takes seconds.
        slow = depth >= 3
        rolls = f"Doublet rolls {max(d)}-{min(d)}: "
        if slow:
            self.say(rolls, end="")
        play = engine_play(g, depth)
        g.play(play)
        again = " and rolls again" if play.again else ""
        self.say(f"{'' if slow else rolls}{other_side(play.notation) or 'no legal play'}"
                 f"{again}.")  # fmt: skip

    def cube_ply(self) -> int:
        """The depth of the engine's cube decisions (Acey-Deucey: at most 1 ply)."""
        return check_ply(self.ply, self.game.variant)

    def verb(self) -> str:
        return "redouble" if self.game.cube > 1 else "double"

    def person_roll(self) -> None:
        """The person may double before rolling: Enter (roll) rolls."""
        g = self.game
        self.show(g.board)
        while True:
            line = self.ask(f"Roll or {self.verb()} (Enter rolls): ")
            word = line.lower()
            if word in ("", "roll", "r"):
                g.roll()
                return
            if word in ("double", "redouble", "d"):
                if not g.may_double():  # a save from before the dead cube was not offered
                    self.say(f"You may not {self.verb()}: {g.why_no_double()}.")
                    continue
                self.person_doubles()
                return
            if self.command(line):
                if g.over:
                    return
                continue
            self.say(f"Press Enter to roll, or type {self.verb()} (or help).")

    def person_doubles(self) -> None:
        self.game.double()
        self.engine_answers()

    def engine_answers(self) -> None:
        """Doublet answers the person's double (offered now, or saved with no answer)."""
        g = self.game
        verb = self.verb()
        value = 2 * g.cube
        answer = engine_answer(g, self.cube_ply())
        if answer == "pass":
            r = g.drop()
            self.say(f"You {verb} to {value}. Doublet passes: you win "
                     f"{r.value} point{'s' * (r.value != 1)}.")  # fmt: skip
        elif answer == "beaver":
            g.beaver()
            self.say(f"You {verb} to {value}. Doublet beavers: the cube is at "
                     f"{g.cube}, on its side.")  # fmt: skip
        else:
            g.take()
            self.say(f"You {verb} to {value}. Doublet takes: the cube is at {g.cube}, "
                     "on its side.")  # fmt: skip

    def say_dead_cube(self) -> None:
        """Taking a double can leave the person a dead cube (2-away taking 2): say so."""
        if self.game.dead_for(PERSON):
            self.say(DEAD_CUBE_NOTE)

    def answer_double(self) -> None:
        """The engine has doubled: take, pass or (money, beavers) beaver."""
        g = self.game
        self.show(g.board_for(PERSON))
        value = 2 * g.cube
        beaver = ", beaver" if g.may_beaver() else ""
        while True:
            line = self.ask(f"Doublet {self.verb()}s to {value}. Take or pass{beaver}? ")
            answer = ANSWERS.get(line.lower())
            if answer == "beaver" and not beaver:
                self.say("Beavers are not allowed in this game: take or pass." if not
                         g.rules.beavers or g.rules.length else "A beaver would take the "
                         "cube past its highest: take or pass.")  # fmt: skip
                continue
            if answer == "take":
                g.take()
                self.say(f"You take: the cube is at {g.cube}, on your side.")
                self.say_dead_cube()
                return
            if answer == "beaver":
                g.beaver()
                self.say(f"You beaver: the cube is at {g.cube}, on your side.")
                self.say_dead_cube()
                return
            if answer == "pass":
                g.drop()
                return
            if line.lower() == "hint":
                self.cube_hint()
                continue
            if line and self.command(line):
                if g.over:
                    return
                continue
            self.say("Type take or pass (drop)" + (" or beaver" if beaver else "") + ".")

    def person_turn(self) -> None:
        g = self.game
        assert g.dice is not None
        self.show(g.board, g.dice)
        if not g.has_play():
            self.pass_turn()
            return
        # Another play typed at the confirmation of a play: read there, confirmed next.
        typed: Play | None = None
        while True:
            if typed is not None:
                play, typed = typed, None
            else:
                line = self.ask("Your play: ")
                if self.command(line):
                    if g.over:
                        return
                    continue
                if not line:
                    self.say("Type your play (e.g. 13/7 8/7), or help.")
                    continue
                try:
                    play = g.position().play(line, *g.dice)
                except (NotationError, IllegalPlayError) as e:
                    self.say(_refused(e))
                    continue
            answer = self.confirm(play)
            if g.over:  # resigned at the confirmation, and accepted
                return
            if answer is True:
                g.play(play)
                if play.again and not g.over:
                    self.say(f"You roll again: {g.dice[0]}-{g.dice[1]}.")
                return
            if isinstance(answer, Play):  # another play: confirmed next, its board shown
                typed = answer
                continue
            self.show(g.board, g.dice)  # the board before the play taken back

    def confirm(self, play: Play) -> bool | Play:
        """Show the board after `play` and ask; True: play it, False: undo (or the game
        ended there: a resignation accepted). Another play typed there takes this one
        back and is returned (the Play, to be confirmed in turn); a command is answered
        as at "Your play:" and the question asked again, as is anything else, with what
        is wrong with it."""
        self.show(play.board)
        self.say(f"You play {play.notation}{' and roll again' if play.again else ''}.")
        g = self.game
        assert g.dice is not None
        while True:
            line = self.ask("Enter confirms, undo takes it back: ")
            answer = line.lower()
            if answer in CONFIRM:
                return True
            if answer.split()[:1] == ["undo"]:  # ("undo it": said "nothing to undo")
                self.say(f"Taken back: {play.notation}.")
                return False
            again = (f"Press Enter to confirm {play.notation}, type undo to take it back, "
                     "or type another play.")  # fmt: skip
            if answer in ("n", "no"):
                self.say(again)
                continue
            # A command is answered as at "Your play:" and the play stays pending (quit
            # and exit leave: the save is from before the play); a resignation the engine
            # accepts ends the game, one declined or refused leaves the play as it was.
            if self.command(line):
                if g.over:
                    return False
                continue
            try:
                other = g.position().play(line, *g.dice)
            except DoubletError as e:  # as at "Your play:" (a review: it was not said)
                self.say(f"{_refused(e)}. {again}")
                continue
            self.say(f"Taken back: {play.notation}.")
            return other

    def pass_turn(self) -> None:
        g = self.game
        while True:
            line = self.ask("No legal play. Enter to pass: ")
            if not line:
                g.play("")
                self.say("You pass.")
                return
            if self.command(line):
                if g.over:
                    return
                continue
            self.say("You have no legal play: press Enter to pass (or help).")

    def command(self, line: str) -> bool:
        """Run `line` if it is a command; False if it is not (a play, or empty)."""
        words = line.split()
        if not words:
            return False
        name, rest = words[0].lower(), words[1:]
        if name in ("help", "?"):
            self.say(HELP)
        elif name == "hint":
            if self.game.phase == "move":
                self.hint()
            else:
                self.cube_hint()
        elif name == "undo":
            self.say("Nothing to undo: undo takes back your play before you confirm it.")
        elif name == "board":  # the person's view, and the dice only on their own turn
            g = self.game
            self.show(g.board_for(PERSON), g.dice if g.turn == PERSON else None)
        elif name in ("quit", "exit"):
            raise Quit
        elif name in ("double", "redouble", "roll", "take", "pass", "drop", "beaver"):
            g = self.game
            if name in ("take", "pass", "drop", "beaver"):
                self.say(f"There is no double to answer: {name} is for when Doublet doubles.")
            elif name == "roll" and g.phase == "answer":
                self.say("Doublet has doubled: take or pass before the game goes on.")
            elif name == "roll" and g.dice is not None:  # the person's play or pass
                self.say(f"Your dice are rolled already: {g.dice[0]}-{g.dice[1]}.")
            elif g.rules.cube:
                why = g.why_no_double() or "now is the time"
                self.say(f"You cannot {name} now: {why}.")
            else:
                self.say("This game is played without the cube (doublet play --no-cube).")
        elif name == "resign":
            self.resign(" ".join(rest).lower())
        elif name == "export":
            self.export(" ".join(rest))
        else:
            return False
        return True

    def hint(self) -> None:
        """The engine's best plays for the person's roll, ranked as the engine ranks them
        (deepest search first, then equity: cubeful in a game with the cube), with the
        loss of each against the best. Only the plays shown are written out (an
        Acey-Deucey 1-2 can have 100,000)."""
        g = self.game
        assert g.dice is not None
        if not g.has_play():
            self.say("No legal play: press Enter to pass.")
            return
        depth = engine_depth(g.variant, self.ply, g.dice)
        s = searcher(None, g.variant)
        boards, again, probs, plies = s.analyse(g.board, *g.dice, Limits(ply=depth))
        state = g.cube_state()
        eq, _ = play_equities(s, boards, again, probs, state)
        top = ranking(probs, plies, eq)[:HINT_PLAYS]
        texts = [format_play(g.board, boards[i], *g.dice, g.variant, bool(again[i])) for i in top]
        width = max(len(t) for t in texts)
        kind = ("cubeless equity" if state is None
                else "equity at the match score, no cube" if state.no_cube
                else "cubeful equity")  # fmt: skip
        self.say(f"Hint ({depth} ply, {kind}), the best {len(top)} of {len(boards)} plays:")
        best = eq[top[0]]
        for rank, (i, text) in enumerate(zip(top, texts, strict=True), 1):
            p = probs[i]
            self.say(
                f"  {rank}. {text:<{width}}  equity {eq[i]:+.3f}  loss {best - eq[i]:.3f}  "
                f"win {100 * p[0]:5.1f}%  win gammon {100 * p[1]:4.1f}%  "
                f"lose gammon {100 * p[3]:4.1f}%" + ("  (rolls again)" if again[i] else "")
            )

    def cube_hint(self) -> None:
        """Before the person's roll, or facing the engine's double: the cube decision at
        the engine's depth (doublet.search.analysis.cube_document)."""
        g = self.game
        state = g.cube_state()
        if state is None or state.no_cube:
            self.say("This game is played without the cube: hint after your roll ranks plays.")
            return
        doc = cube_document(Position(g.board, g.variant), state, self.cube_ply(),
                            made=g.phase == "answer")  # fmt: skip
        eq = doc["equities"]
        if g.phase == "answer":  # the engine doubled: what it means for the person
            dt, dp = eq["double_take"], eq["double_pass"]
            if doc.get("beaver"):  # double_take is the beavered game's: twice the take's
                self.say(f"Hint ({doc['ply']} ply): beaver. For you, beavering is worth "
                         f"{-dt:+.3f}, taking {-dt / 2:+.3f} and passing {-dp:+.3f} (in "
                         "units of the cube now).")  # fmt: skip
                return
            right, wrong = ("take", "passing") if doc["take"] else ("pass", "taking")
            self.say(f"Hint ({doc['ply']} ply): {right}. For you, taking is worth "
                     f"{-dt:+.3f} and passing {-dp:+.3f} (in units of the cube now): "
                     f"{wrong} loses {abs(dp - dt):.3f}.")  # fmt: skip
            return
        self.say(f"Hint ({doc['ply']} ply): {doc['action']}.")
        if eq["double_take"] is None:
            self.say(f"  No double {eq['no_double']:+.3f}")
            return
        answer = "double_take" if doc["take"] else "double_pass"
        best = doc["optimal"]  # the value after the best action: no double, or the answer
        take = "Double, beaver" if doc.get("beaver") else "Double, take"
        for name, key in (("No double", "no_double"), (take, "double_take"),
                          ("Double, pass", "double_pass")):  # fmt: skip
            # The loss of each action the doubler chooses; the answer is the taker's.
            loss = f"  loss {best - eq[key]:.3f}" if key in ("no_double", answer) else ""
            self.say(f"  {name:<13} {eq[key]:+.3f}{loss}")
        p = doc["probabilities"]
        self.say(f"  win {100 * p['win']:.1f}%  win gammon {100 * p['win_gammon']:.1f}%  "
                 f"lose gammon {100 * p['lose_gammon']:.1f}%")  # fmt: skip

    def resign(self, what: str) -> None:
        """Offer a resignation: confirmed by the person, then accepted by the engine only
        when it is worth at least as much to it as playing on."""
        if what not in RESIGN:
            self.say("resign, resign gammon or resign backgammon (1, 2 or 3 points).")
            return
        g = self.game
        if g.phase == "answer":
            self.say(f"You cannot resign now: {NO_RESIGN_NOW}.")
            return
        points = RESIGN[what]
        value = g._value(points)
        sure = self.ask(f"Resign a {RESULT_NAMES[points]} ({value} point{'s' * (value != 1)})? "
                        "Type yes to confirm: ").lower()  # fmt: skip
        if sure not in ("y", "yes"):
            self.say("Not resigned: the game goes on.")
            return
        v = resignation(g, PERSON, points, self.cube_ply())
        if not v.accepted:
            unit = "match-winning chance" if g.rules.length else "points"
            self.say(f"Doublet refuses: playing on is worth {v.playing_on:.3f} {unit} to it, "
                     f"the resignation {v.offered:.3f}. The game goes on.")  # fmt: skip
            return
        g.resign(PERSON, points)
        self.say(f"You resign a {RESULT_NAMES[points]}; Doublet accepts.")

    def export(self, name: str) -> None:
        if not name:
            self.say("export needs a file name: export FILE (FILE.mat or FILE.sgf: the match "
                     "file)")  # fmt: skip
            return
        if "\0" in name:  # (the OS takes no NUL in a name: a ValueError ended the session)
            self.say(f"Cannot write {name!r}: a file name holds no NUL character")
            return
        path = Path(name).expanduser()
        if (why := _onto_save(path, self.save_path) or missing_folder(path)) is not None:
            self.say(f"Cannot write {name}: {why}")
            return
        try:
            if path.suffix.lower() in MATCH_FILES:
                self.write_match(path)
                self.say(f"The match file of this {self.series.describe()} is in {name}.")
                return
            with atomic_open(path, "w") as f:  # the seed only once the series is over
                f.write(self.game.export(RECORD_NAMES, seed=self.series.over))
        except OSError as e:
            self.say(f"Cannot write {name}: {write_error(path, e)}")
            return
        except DoubletError as e:
            self.say(f"Cannot export: {e}")
            return
        self.say(f"The record of this game ({len(self.game.record)} turns) is in {name}.")

    def write_match(self, path: Path) -> None:
        """The series so far as a match file (.mat or .sgf, by the name), written atomically."""
        text = MATCH_FILES[path.suffix.lower()](self.series, RECORD_NAMES)
        with atomic_open(path, "w") as f:
            f.write(text)

    def game_over(self) -> None:
        g = self.game
        r = self.series.record_result()
        self.show(g.board_for(PERSON))
        how = " (resigned)" if r.resigned else " (double passed)" if r.passed else ""
        winner = "You win" if r.winner == PERSON else "Doublet wins"
        self.say(f"{winner} a {r.name}{how}: {r.value} point{'s' * (r.value != 1)}.")
        s = self.series
        self.say(f"Score: {NAMES[PERSON]} {s.score[PERSON]}, {NAMES[ENGINE]} {s.score[ENGINE]}.")
        if self.export_path is not None:
            try:
                if self.export_path.suffix.lower() in MATCH_FILES:
                    self.write_match(self.export_path)
                    what = f"The match file, {len(s.history) + 1} game(s), is in"
                else:
                    self.add_record(g.export(RECORD_NAMES, seed=s.over) + "\n")
                    what = f"The record of game {g.number + 1} is added to"
            except OSError as e:
                why = write_error(self.export_path, e)
                self.say(f"Cannot write the record to {self.export_path}: {why}")
            except DoubletError as e:
                self.say(f"Cannot export: {e}")
            else:
                self.say(f"{what} {self.export_path}.")

    def add_record(self, record: str) -> None:
        """Add a game's text record to the end of the --export file, atomically (a kill
        leaves the file as it was or with the record whole), and once: a session killed
        after writing it and before its next save ends that game again on --resume, and
        then finds the record already there."""
        assert self.export_path is not None
        try:
            old = self.export_path.read_bytes()
        except FileNotFoundError:
            old = b""
        new = record.encode("utf-8")
        again, self.ended_before = self.ended_before, False
        if again and old.endswith(new):
            return
        with atomic_open(self.export_path, "wb") as f:
            f.write(old + new)

    def series_over(self) -> int:
        s = self.series
        if s.length:
            mine, theirs = s.score
            who = "You win" if s.winner == PERSON else "Doublet wins"
            self.say(f"{who} the {s.length}-point match {max(mine, theirs)}-{min(mine, theirs)}.")
        elif s.games > 1:
            mine, theirs = s.score
            who = "The series is drawn"
            if mine != theirs:
                who = "You win the series" if mine > theirs else "Doublet wins the series"
            self.say(f"Final score: {NAMES[PERSON]} {mine}, {NAMES[ENGINE]} {theirs}. {who}.")
        if not s.seed_chosen:
            self.say(f"The dice's seed was {s.seed} (--seed {s.seed} plays them again).")
        if self.owns_save:
            self.save_path.unlink(missing_ok=True)
        return 0

    def autosave(self) -> None:
        """After every turn, the series as it stands, atomically: a kill -9 loses at most
        the turn being played. A saved game of another session at the same path is kept
        beside it (_set_aside) the first time."""
        if not self.owns_save and self.save_path.exists():
            keep = _set_aside(self.save_path)
            if keep is not None:
                self.say(f"(The game saved before is kept in {keep}: doublet play --resume "
                         f"--save {shlex.quote(str(keep))} continues it.)")  # fmt: skip
        self.series.ply = self.ply
        try:
            self.series.save(self.save_path)
        except OSError as e:
            if not self.save_failed:
                self.say(f"(Cannot save the game to {self.save_path}: "
                         f"{write_error(self.save_path, e)}. "
                         "Playing on without saving.)")  # fmt: skip
                self.save_failed = True
            return
        self.owns_save = True

    def save_and_leave(self, status: int = 0) -> int:
        """Save the series and say how to go on; the exit status: `status` (0 for quit
        and end of input, 128 + a signal's number for the signal that ended the session),
        1 when the save failed (said on stderr as doublet's errors are)."""
        self.series.ply = self.ply
        try:
            self.series.save(self.save_path)
        except OSError as e:
            with contextlib.suppress(OSError):  # stderr may be gone with the terminal
                print(f"doublet: error: could not save the game to {self.save_path}: "
                      f"{write_error(self.save_path, e)}", file=sys.stderr)  # fmt: skip
            return 1
        resume = "doublet play --resume"
        if self.save_path != default_save_path():
            resume += f" --save {shlex.quote(str(self.save_path))}"
        with contextlib.suppress(OSError):  # the terminal is gone (SIGHUP): saved all the same
            self.say(f"\nGame saved to {self.save_path}; {resume} continues it.")
        return status


# -- command line -----------------------------------------------------------------------


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register `doublet play` on the subparsers of doublet.apps.cli's parser."""
    p: argparse.ArgumentParser = sub.add_parser(
        "play",
        help="play against the engine in the terminal",
        description="Play a game or a series against Doublet. Type plays in the usual "
        "notation (13/7 8/7, bar/20*, 6/off, 8/5(2)) or help for the commands (hint, undo, "
        "resign, export, quit). quit, Ctrl-D and Ctrl-C save the game; --resume continues it.",
        epilog="Engine depth: standard backgammon 2 ply by default (about 0.1 s a move, a "
        "second at most). Acey-Deucey 1 ply by default and at most; a 1-2, which can have "
        "over 800,000 plays, is searched at 0 ply, so that the engine never takes more than a few "
        "seconds.",
    )
    p.add_argument(
        "--variant",
        choices=["standard", "acey-deucey"],
        default=None,
        help="the game (default standard)",
    )
    p.add_argument(
        "--ply",
        type=int,
        default=None,
        help=f"engine depth 0..{MAX_PLAY_PLY} (default: 2; Acey-Deucey 1)",
    )
    p.add_argument(
        "--first",
        choices=["you", "engine", "throw"],
        default=None,
        help="who starts the first game (default throw: one die each)",
    )
    p.add_argument("--seed", type=int, default=None, help="dice seed (default random)")
    p.add_argument(
        "--games",
        type=int,
        default=None,
        help="games in a money session (default 1; 0: until you quit)",
    )
    kind = p.add_mutually_exclusive_group()
    kind.add_argument(
        "--match",
        type=int,
        metavar="N",
        default=None,
        help="play a match to N points (1..25) with the Crawford rule",
    )
    kind.add_argument(
        "--money", action="store_true", help="play for money, game by game (the default)"
    )
    p.add_argument(
        "--jacoby",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="money play: gammons count only once the cube is turned (default on)",
    )
    p.add_argument("--beavers", action="store_true", default=None, help="money play: allow beavers")
    p.add_argument(
        "--no-cube",
        dest="cube",
        action="store_false",
        default=None,
        help="play without the doubling cube",
    )
    p.add_argument("--resume", action="store_true", help="continue the saved game")
    p.add_argument(
        "--save",
        metavar="FILE",
        default=None,
        help="where the game is saved (default $XDG_DATA_HOME/doublet/game.json, "
        "else ~/.local/share/doublet/game.json)",
    )
    p.add_argument(
        "--export",
        metavar="FILE",
        default=None,
        help="after each game, write the record to FILE: FILE.mat the whole match or session "
        "as a .mat match file (gnubg and eXtreme Gammon import it), FILE.sgf as gnubg's SGF; "
        "another name gets each "
        "game's text record added (kept with the saved game: --resume goes on writing it)",
    )
    p.set_defaults(func=cmd_play)
    return p


def _check_save_target(path: Path) -> None:
    """A new series saves to `path`, keeping a saved game there as NAME.previous: a folder
    or a file that is not a Doublet saved game at `path` is refused (DoubletError), so
    that nothing else is moved aside."""
    if path.is_dir():
        raise DoubletError(f"--save {str(path)!r} is a folder: give the path of a file "
                           f"(for example {str(path / 'game.json')!r})")  # fmt: skip
    if not path.exists():
        return
    try:
        with path.open("rb") as f:
            head = f.read(4096)
    except OSError as e:
        raise DoubletError(f"cannot read {str(path)!r}: {e.strerror}") from None
    if not re.search(rb'"format"\s*:\s*"' + FORMAT.encode() + rb'"', head):
        raise DoubletError(f"{str(path)!r} is not a Doublet saved game: it is left as it is; "
                           "give --save another path")  # fmt: skip


def _onto_save(path: Path, save_path: Path) -> str | None:
    """Why an export may not go to `path`: it is the save file or its lock (a review:
    `export` over the save left a text record where the game was saved), else None."""

    def key(p: Path) -> Path:
        try:
            return p.expanduser().resolve()
        except (OSError, RuntimeError):  # a symbolic link loop (Python 3.11: RuntimeError)
            return p.expanduser().absolute()

    if key(path) in (key(save_path), key(save_path.with_name(save_path.name + ".lock"))):
        return "it is this game's save file (or its lock): give the export another name"
    return None


def _set_aside(path: Path) -> Path | None:
    """Move the saved game at `path` out of a new series' way, to NAME.previous.json or,
    when that holds a game already, the first free NAME.previous-N.json, so that no saved
    game is overwritten; a save in which nothing was played yet (a session started and
    left at once) is replaced instead. Where it went (None: replaced, or not movable)."""
    try:
        old: Series | None = Series.load(path)
    except DoubletError:
        old = None  # not readable as a series: kept all the same
    if old is not None and not (old.history or old.game.record or old.game.offered):
        return None
    n = 1
    while True:
        keep = path.with_name(f"{path.stem}.previous{f'-{n}' if n > 1 else ''}{path.suffix}")
        if not keep.exists():
            break
        n += 1
    try:
        os.replace(path, keep)
    except OSError:
        return None
    return keep


def cmd_play(args: argparse.Namespace, out: TextIO) -> int:

    save_path = Path(args.save).expanduser() if args.save else default_save_path()
    if save_path.is_symlink():  # the file it names is saved and locked, the link kept
        save_path = save_path.resolve()
    if args.save and not args.resume:  # the default place is Doublet's own: what is
        _check_save_target(save_path)  # there is moved aside (before a lock is made)
    # A second doublet play on the same save is refused rather than overwriting this one's
    # game (a lock file beside it, NAME.lock, while the session runs).
    busy = (f"another doublet play is using the saved game {str(save_path)!r}: finish or "
            "quit that one first, or give this one --save another path")  # fmt: skip
    with contextlib.suppress(OSError):  # the lock's folder (the save's; made on the first
        save_path.parent.mkdir(parents=True, exist_ok=True)  # save anyway)
    with held_lock(save_path.with_name(save_path.name + ".lock"), busy):
        remove_temps(save_path.parent, glob.escape(save_path.name))  # a kill -9 mid-save's
        return _play(args, out, save_path)


def _play(args: argparse.Namespace, out: TextIO, save_path: Path) -> int:
    """cmd_play with the save locked."""
    if args.ply is not None and not 0 <= args.ply <= MAX_PLAY_PLY:
        raise DoubletError(f"--ply must be 0..{MAX_PLAY_PLY}, got {args.ply}")
    if args.resume:
        given = ("variant", "first", "seed", "games", "match", "jacoby", "beavers", "cube")
        # each as typed: --cube is stored by --no-cube, --jacoby False by --no-jacoby
        fixed = [f"--{'no-' if k == 'cube' or getattr(args, k) is False else ''}{k}"
                 for k in given if getattr(args, k) is not None]  # fmt: skip
        if args.money:
            fixed.append("--money")
        if fixed:
            raise DoubletError(
                f"--resume continues the saved series as it was; "
                f"{', '.join(fixed)} cannot be given with it"
            )
        # A series saved as its last game ended (a kill before its end was said and the
        # record written) resumes to that end: the result, the record, the save removed.
        series = Series.load(save_path)
        ply = series.ply if args.ply is None else args.ply  # both checked (the load's)
    else:
        variant = args.variant or "standard"
        games = 1 if args.games is None else args.games
        if games < 0:
            raise DoubletError(f"--games must be 0 (no limit) or more, got {games}")
        if args.seed is not None and not 0 <= args.seed <= MAX_GAME_SEED:  # see game_roll
            raise DoubletError(f"--seed must be 0 to 2**63 - 1, got {shown(args.seed, 30)}")
        ply = DEFAULT_PLY[variant] if args.ply is None else args.ply
        starter = {"you": PERSON, "engine": ENGINE, "throw": None}[args.first or "throw"]
        cube = args.cube is None
        length = args.match or 0
        if args.match is not None:
            if not 1 <= args.match <= 25:
                raise DoubletError(f"--match must be 1..25 points, got {args.match}")
            for k in ("jacoby", "beavers"):
                if getattr(args, k):
                    raise DoubletError(f"--{k} is for money play, not a match")
            if args.games is not None:
                raise DoubletError("--games is for money play: a match goes on until a side "
                                   "has its points")  # fmt: skip
        if not cube and (args.jacoby or args.beavers):
            raise DoubletError("--jacoby and --beavers need the cube (not --no-cube)")
        jacoby = cube and not length and args.jacoby is not False
        series = Series.new(variant, games, args.seed, ply, starter, length=length, cube=cube,
                            jacoby=jacoby, beavers=bool(args.beavers))  # fmt: skip
    if args.export:  # kept in the save, so that --resume goes on writing it
        series.export = str(Path(args.export).expanduser().absolute())
    export_path = Path(series.export) if series.export else None
    if export_path is not None:  # checked now, written when a game ends
        why = (_onto_save(export_path, save_path) or missing_folder(export_path)
               or file_path_error(export_path))  # fmt: skip
        if (why is None and export_path.suffix.lower() in MATCH_FILES
                and series.variant != STANDARD):  # fmt: skip
            why = f"{MAT_IS_STANDARD} (--export FILE.txt)"
        if why is not None:
            raise DoubletError(f"cannot write {args.export or series.export!r}: {why}")
    announce_compile(*SEARCH_KERNELS, *EVAL_KERNELS)  # the cube decisions evaluate too
    # A byte the locale cannot read is no crash (a review: UnicodeDecodeError), and a
    # character the terminal cannot show neither (only strict streams: the C locale's
    # surrogateescape keeps bytes as they were).
    for stream in (sys.stdin, out):
        if isinstance(stream, io.TextIOWrapper) and stream.errors == "strict":
            with contextlib.suppress(io.UnsupportedOperation, ValueError):
                stream.reconfigure(errors="replace")
    session = Session(series, ply, save_path, export_path, sys.stdin, out, args.resume)
    # Each waits while a turn is being applied (held_while_changing), so that the save
    # it leads to holds whole turns.
    if hasattr(signal, "SIGHUP"):  # the terminal closed: save, as on quit
        signal.signal(signal.SIGHUP, held_while_changing(_hang_up))
    signal.signal(signal.SIGTERM, held_while_changing(_hang_up))  # kill: save, as on quit
    # Ctrl-C saves too, even when started from a shell that ignores SIGINT (a background
    # job inherits SIG_IGN, and Python then installs no KeyboardInterrupt handler).
    signal.signal(signal.SIGINT, held_while_changing(signal.default_int_handler))
    if not args.resume and save_path.exists():
        session.say(
            f"(A saved game is in {save_path}: this game takes its place, and the old one "
            f"is kept beside it, under a name said then, if anything was played in it.)"
        )
    return session.run()
