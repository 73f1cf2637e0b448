"""`python -m autovend.cli` runs the command-line interface."""

from autovend.cli import main

main()
