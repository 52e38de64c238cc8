"""Write tests/data/review_matches_ply0.json again: the 0-ply review of
tests/data/matches/*.mat that tests/test_game_review.py compares with. Run it (from the
repository root, `python tests/data/remake_review_matches.py`) only when the shipped
model or the 0-ply value changes on purpose, and say so in the test's docstring. Each
player and each error keeps the keys the file held before (per error kind), so that
later additions to the review stay out of the comparison."""

from __future__ import annotations

import json
from pathlib import Path

from doublet.formats.matfile import read_match
from doublet.games.review import review

DATA = Path(__file__).resolve().parent
OUT = DATA / "review_matches_ply0.json"


def main() -> None:
    old = json.loads(OUT.read_text())
    player_keys = list(next(iter(old.values()))["players"][0])
    error_keys: dict[str, list[str]] = {}
    for doc in old.values():
        for e in doc["errors"]:
            error_keys.setdefault(e["kind"], list(e))
    new = {}
    for path in sorted((DATA / "matches").glob("*.mat")):
        match, games = read_match(path.read_text())
        doc = json.loads(json.dumps(review(match, games, ply=0)))
        unknown = {e["kind"] for e in doc["errors"]} - error_keys.keys()
        if unknown:
            raise SystemExit(f"{path.name}: error kinds the old file has no keys for: {unknown}")
        new[path.name] = {
            "length": doc["length"],
            "ply": doc["ply"],
            "players": [{k: p[k] for k in player_keys} for p in doc["players"]],
            "errors": [{k: e[k] for k in error_keys[e["kind"]]} for e in doc["errors"]],
        }
    tmp = OUT.with_suffix(".tmp")
    tmp.write_text(json.dumps(new, indent=1) + "\n")
    tmp.replace(OUT)
    print(f"wrote {OUT} ({sum(len(d['errors']) for d in new.values())} errors)")


if __name__ == "__main__":
    main()
