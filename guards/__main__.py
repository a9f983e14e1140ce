"""``python -m guards``: the command line."""

from guards.cli import main

main()
