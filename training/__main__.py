"""``python -m doublet.training --config NAME --out DIR [--games N] [--resume] [--seed S]``,
or a whole recipe: ``python -m doublet.training --recipe FILE --out DIR`` (training/recipe.py)."""

import sys

if __name__ == "__main__":  # not on import: spawn-started workers import this module
    try:
        if any(a == "--recipe" or a.startswith("--recipe=") for a in sys.argv[1:]):
            from doublet.training.recipe import main
        else:
            from doublet.training.train import main
    except ModuleNotFoundError as e:  # one line, not a traceback
        if e.name != "torch":
            raise
        from doublet.training.usage import without_torch

        sys.exit(without_torch(sys.argv[1:], "doublet train"))

    sys.exit(main())
