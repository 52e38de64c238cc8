import sys

from doublet.apps.cli import main

sys.exit(main())
