"""Layer 8, apps: the front ends. The `doublet` command line and engine protocol (cli),
the terminal game (terminal) and the browser game (serve, with web/). The only layer
that may import doublet.training (lazily: torch is an optional extra)."""
