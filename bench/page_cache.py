#!/usr/bin/env python3
"""Drop files' pages from the page cache, so that the next read comes from disk.

    python3 bench/page_cache.py FILE...

Each file is flushed first (dirty pages cannot be dropped), then `POSIX_FADV_DONTNEED`. No root
needed, and nothing but the named files is touched. Also imported by the measurement scripts.
"""

import os
import sys


def evict_from_page_cache(path: str) -> None:
    """Flush `path` and drop its pages from the page cache."""
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
        os.posix_fadvise(descriptor, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(descriptor)


if __name__ == "__main__":
    for each in sys.argv[1:]:
        evict_from_page_cache(each)
