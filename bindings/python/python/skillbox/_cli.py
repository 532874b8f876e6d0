"""The ``skillbox`` command this package installs: the CLI binary it carries, run in place of
this process (it finds its sandbox helper beside itself)."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def main() -> None:
    binary = Path(__file__).resolve().parent / "_bin" / "skillbox"
    if not binary.is_file():
        sys.exit(
            f"skillbox: this installation has no `skillbox` binary at {binary}; "
            "reinstall the package (pip install ./bindings/python builds it)"
        )
    os.execv(binary, [str(binary), *sys.argv[1:]])


if __name__ == "__main__":
    main()
