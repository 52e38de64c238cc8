"""``python -m doublet.training --config NAME --out DIR [--games N] [--resume] [--seed S]``,
or a whole recipe: ``python -m doublet.training --recipe FILE --out DIR`` (training/recipe.py)."""

import sys

if __name__ == "__main__":  # not on import: spawn-started workers import this module
    if any(a == "--recipe" or a.startswith("--recipe=") for a in sys.argv[1:]):
        from doublet.training.recipe import main
    else:
        from doublet.training.train import main

    sys.exit(main())
