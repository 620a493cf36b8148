"""The bundled model's runtime, xllamacpp (llama.cpp's own server, prebuilt): the release pinned, the one installed,
and whether a prebuilt wheel fits this machine.

Standard library only: install.sh runs this file (`runpy.run_path`) before anything is installed, to say in one line
that no wheel fits (another CPU architecture, an old glibc) before downloading anything.
"""

from __future__ import annotations

import importlib.util
import platform

__all__ = ["runtime_version"]

# llama.cpp's own server, prebuilt (an abi3 CPU wheel: no compiler). The tested release, pinned exactly: its
# sampling defaults and grammar engine shape what the bundled model replies.
RUNTIME = ("xllamacpp", "2026.10.11549")
# The wheels the pinned release ships for CPUs: (platform.system(), platform.machine()) and, on Linux, the oldest
# glibc they load with (manylinux2014).
_WHEEL_PLATFORMS = {("Linux", "x86_64"), ("Linux", "aarch64"), ("Darwin", "arm64"), ("Windows", "AMD64")}
_MIN_GLIBC = (2, 17)
BUILD_FROM_SOURCE = "https://github.com/xorbitsai/xllamacpp#build-from-source"


def runtime_version() -> str | None:
    """xllamacpp's version when it is installed (found without importing its 100 MB library), else None."""
    from importlib import metadata  # deferred: 20 ms (email, zipfile), only to find an installed package

    try:
        if importlib.util.find_spec(RUNTIME[0]) is None:
            return None
        return metadata.version(RUNTIME[0])
    except (ImportError, ValueError, metadata.PackageNotFoundError):
        return None


def runtime_unfit(system: str | None = None, machine: str | None = None,
                  glibc: tuple[str, str] | None = None) -> str | None:
    """Why no prebuilt xllamacpp wheel fits this machine (another CPU architecture, an old glibc), with what to
    do, in one line; None when one does."""
    system, machine = system or platform.system(), machine or platform.machine()
    fix = f"use a hosted model (--model PROVIDER/MODEL), or build xllamacpp from source: {BUILD_FROM_SOURCE}"
    if (system, machine) not in _WHEEL_PLATFORMS:
        return f"xllamacpp has no prebuilt wheel for {system} {machine}; {fix}"
    if system == "Linux":
        lib, version = glibc or platform.libc_ver()
        try:
            found = tuple(int(part) for part in version.split(".")[:2])
        except ValueError:
            found = ()
        if lib != "glibc" or len(found) < 2 or found < _MIN_GLIBC:
            libc = f"{lib} {version}".strip() or "an unknown C library"
            return (f"xllamacpp's Linux wheels need glibc {'.'.join(map(str, _MIN_GLIBC))} or newer, this machine "
                    f"has {libc}; {fix}")
    return None
