"""``python -m doublet.training --config NAME --out DIR [--games N] [--resume] [--seed S]``."""

import sys

if __name__ == "__main__":  # not on import: spawn-started workers import this module
    from doublet.training.train import main

    sys.exit(main())
