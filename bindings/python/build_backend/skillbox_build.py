"""The build backend of the `skillbox` wheel: maturin's, after putting the `skillbox` command
and the `skillbox-sandbox` helper into `skillbox/_bin/`, built by cargo in the workspace's
target folder. The extension runs scripts through that helper, so a wheel without it could not
sandbox anything.

SKILLBOX_WHEEL_PROFILE names the cargo profile of the binaries and the extension (`release`
by default; the test script uses `dev`, whose artifacts `cargo test` already built).
SKILLBOX_PREBUILT_BINARIES names a folder holding both binaries already built (the test
command passes the ones `cargo test --workspace` just built, which a separate `cargo build`
would build again with another feature set); nothing is built for them then.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import maturin
from maturin import *  # noqa: F401,F403  (every PEP 517 hook maturin has)

PACKAGE_ROOT = Path(__file__).resolve().parent.parent
BINARIES = (("skillbox-cli", "skillbox"), ("skillbox-exec", "skillbox-sandbox"))


def _profile() -> str:
    return os.environ.get("SKILLBOX_WHEEL_PROFILE", "release")


def _cargo() -> str:
    cargo = shutil.which("cargo")
    if cargo is None:
        raise RuntimeError(
            "building skillbox needs cargo (the Rust toolchain) on PATH: https://rustup.rs"
        )
    return cargo


def _prepare_binaries() -> None:
    prebuilt = os.environ.get("SKILLBOX_PREBUILT_BINARIES")
    if prebuilt:
        _install_binaries(Path(prebuilt))
        return
    cargo = _cargo()
    profile = _profile()
    command = [cargo, "build", "--locked", "--profile", profile]
    for package, binary in BINARIES:
        command += ["-p", package, "--bin", binary]
    print(f"skillbox_build: {' '.join(command)}", file=sys.stderr, flush=True)
    subprocess.run(command, cwd=PACKAGE_ROOT, check=True, stdout=sys.stderr)
    metadata = subprocess.run(
        [cargo, "metadata", "--format-version", "1", "--no-deps"],
        cwd=PACKAGE_ROOT,
        check=True,
        capture_output=True,
    )
    target = Path(json.loads(metadata.stdout)["target_directory"])
    _install_binaries(target / ("debug" if profile in ("dev", "test") else profile))


def _install_binaries(built: Path) -> None:
    destination = PACKAGE_ROOT / "python" / "skillbox" / "_bin"
    destination.mkdir(exist_ok=True)
    for _, binary in BINARIES:
        staged = destination / f".{binary}.partial"
        shutil.copyfile(built / binary, staged)
        staged.chmod(0o755)
        staged.replace(destination / binary)


def _with_profile() -> None:
    args = os.environ.get("MATURIN_PEP517_ARGS", "")
    if "--profile" not in args and "--release" not in args:
        os.environ["MATURIN_PEP517_ARGS"] = f"{args} --profile {_profile()}".strip()


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    _prepare_binaries()
    _with_profile()
    return maturin.build_wheel(wheel_directory, config_settings, metadata_directory)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    _prepare_binaries()
    _with_profile()
    return maturin.build_editable(wheel_directory, config_settings, metadata_directory)
