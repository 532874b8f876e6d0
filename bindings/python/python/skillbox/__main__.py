"""``python -m skillbox``: the ``skillbox`` command."""

from ._cli import main

main()
