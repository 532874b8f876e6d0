"""Helpers for code running in a skillbox Skills Protocol sandbox.

    import runtime

    text = runtime.blobs.read_text("blob:...")        # a blob passed in `input_blobs`
    rows = runtime.blobs.read_json("blob:...")
    with runtime.blobs.open("blob:...") as stream:    # large blobs: read in pieces
        head = stream.read(4096)
    runtime.write_output("report.md", "# Report\\n")   # becomes one of the run's output blobs

Input blobs are also plain read-only files under /blobs/ (`runtime.blobs.path(id)`). Files
written under `runtime.OUT_DIR` (/workspace/out/) become output blobs when the run ends.
"""

import json
import os

__all__ = ["BlobNotFound", "blobs", "write_output", "WORKSPACE", "OUT_DIR"]

WORKSPACE = "/workspace"
OUT_DIR = "/workspace/out"


class BlobNotFound(LookupError):
    """The blob was not passed to this run in `input_blobs`."""


class Blobs:
    """The blobs this run may read: those passed in `input_blobs`."""

    def __init__(self):
        self._paths = {}

    def ids(self):
        """The ids of the blobs passed to this run."""
        return sorted(self._paths)

    def path(self, blob_id):
        """The read-only file holding a blob."""
        key = blob_id if str(blob_id).startswith("blob:") else "blob:%s" % blob_id
        path = self._paths.get(key.lower())
        if path is None:
            passed = ", ".join(self.ids()) or "none"
            raise BlobNotFound(
                "blob %r was not passed to this run; list it in `input_blobs` (passed: %s)"
                % (blob_id, passed)
            )
        return path

    def open(self, blob_id, mode="rb", encoding=None):
        """Open a blob for reading (binary unless mode is "r")."""
        if mode not in ("r", "rb", "rt"):
            raise ValueError("blobs are read-only: open them with mode 'r' or 'rb'")
        if "b" in mode:
            return open(self.path(blob_id), "rb")
        return open(self.path(blob_id), "r", encoding=encoding or "utf-8")

    def read_bytes(self, blob_id):
        """The blob's content as bytes."""
        with self.open(blob_id, "rb") as stream:
            return stream.read()

    def read_text(self, blob_id, encoding="utf-8", errors="strict"):
        """The blob's content as text."""
        return self.read_bytes(blob_id).decode(encoding, errors)

    def read_json(self, blob_id):
        """The blob's content parsed as JSON."""
        return json.loads(self.read_text(blob_id))


blobs = Blobs()


def write_output(name, data):
    """Write `data` (text or bytes) to OUT_DIR/name; the file becomes an output blob."""
    path = os.path.join(OUT_DIR, name)
    if os.path.commonpath([os.path.realpath(path), os.path.realpath(OUT_DIR)]) != os.path.realpath(
        OUT_DIR
    ):
        raise ValueError("output name %r leaves the output folder" % name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as stream:
        stream.write(data.encode("utf-8") if isinstance(data, str) else data)
    return path


def _configure(blob_paths, workspace):
    global WORKSPACE, OUT_DIR
    blobs._paths = {key.lower(): path for key, path in blob_paths.items()}
    WORKSPACE = workspace
    OUT_DIR = os.path.join(workspace, "out")
