"""System software that is not a Python package: the Vulkan driver for rendering, Xvfb, ffmpeg.

Headless rendering (the viewer's offscreen capture, the scenes' ``--headless``) and the ``vulkan`` backend
need a Vulkan driver; on a machine without a GPU that is Mesa's software driver, lavapipe, from the system's
packages. A real window on a machine without a display needs Xvfb; MP4 recording needs ffmpeg.

:func:`provide` looks for each and, where one is missing and this process may install system packages
(root, with ``apt-get``), installs it; otherwise it says which command would. The scenes' command line and
the test suite call it; the library itself never installs anything.
"""
from __future__ import annotations

import ctypes
import glob
import os
import shutil
import subprocess
import sys

#: Debian packages of each requirement
PACKAGES = {
    "vulkan": ("mesa-vulkan-drivers", "libvulkan1"),
    "xvfb": ("xvfb", "xauth"),
    "ffmpeg": ("ffmpeg",),
}

#: what each requirement is for, as messages name it
PURPOSE = {
    "vulkan": "a Vulkan driver (headless rendering and the vulkan backend)",
    "xvfb": "Xvfb (a window without a display)",
    "ffmpeg": "ffmpeg (MP4 recording)",
}

_ICD_DIRS = ("/usr/share/vulkan/icd.d", "/etc/vulkan/icd.d", "/usr/local/share/vulkan/icd.d",
             "/usr/local/etc/vulkan/icd.d")


def install_command(names) -> str:
    """The shell command that installs ``names`` (keys of :data:`PACKAGES`)."""
    packages = [p for n in _check_names(names) for p in PACKAGES[n]]
    return "apt-get update && apt-get install -y " + " ".join(packages)


def available(name: str) -> bool:
    """Whether the requirement ``name`` (``"vulkan"``, ``"xvfb"`` or ``"ffmpeg"``) is present."""
    _check_names([name])
    if name == "vulkan":
        return _vulkan_loader() and bool(_vulkan_icds())
    if name == "xvfb":
        return shutil.which("xvfb-run") is not None and shutil.which("Xvfb") is not None
    return shutil.which("ffmpeg") is not None and shutil.which("ffprobe") is not None


def missing(names) -> list[str]:
    """The requirements among ``names`` that are not present."""
    return [n for n in _check_names(names) if not available(n)]


def why_missing(name: str) -> str:
    """One line: why ``name`` is not there and the command that installs it (``""`` if it is there)."""
    if available(name):
        return ""
    hidden = _hidden_icds() if name == "vulkan" else ""
    if hidden:
        return f"{PURPOSE[name]} is hidden: {hidden}"
    return f"{PURPOSE[name]} is not installed; install it with: {_privileged()}{install_command([name])}"


def can_install() -> bool:
    """Whether this process may install system packages: root, with ``apt-get`` on the PATH."""
    return hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("apt-get") is not None


def provide(names, *, quiet: bool = False) -> list[str]:
    """Install the requirements among ``names`` that are missing, where :func:`can_install`.

    Says on stderr what it installs (unless ``quiet``), since ``apt-get`` takes a while (about a minute for
    all three). Returns the requirements still missing afterwards (each one's reason: :func:`why_missing`).
    A driver hidden on purpose (``VK_ICD_FILENAMES`` or ``VK_DRIVER_FILES`` naming files that do not exist)
    is left hidden.
    """
    need = [n for n in missing(names) if not (n == "vulkan" and _hidden_icds())]
    if need and can_install():
        command = install_command(need)
        if not quiet:
            print(f"taichi_terra: installing {', '.join(PURPOSE[n] for n in need)}: {command}", file=sys.stderr,
                  flush=True)
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        packages = [p for n in need for p in PACKAGES[n]]
        for args in (["apt-get", "update", "-qq"],
                     ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *packages]):
            done = subprocess.run(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            if done.returncode != 0:
                if not quiet:
                    tail = done.stderr.strip().splitlines()[-1:] or ["(no message)"]
                    print(f"taichi_terra: {' '.join(args[:2])} failed: {tail[0]}", file=sys.stderr, flush=True)
                break
    return missing(names)


def require(names, *, install: bool = True, quiet: bool = False) -> None:
    """Make sure the requirements among ``names`` are present, installing them first if ``install`` and
    :func:`can_install`; raises :class:`MissingSystemSoftware` with one line per missing one otherwise."""
    still = provide(names, quiet=quiet) if install else missing(names)
    if still:
        raise MissingSystemSoftware("; ".join(why_missing(n) for n in still))


class MissingSystemSoftware(RuntimeError):
    """A requirement that is not a Python package is missing (the message names the command to run)."""


def _check_names(names) -> list[str]:
    names = [names] if isinstance(names, str) else list(names)
    for n in names:
        if n not in PACKAGES:
            raise ValueError(f"names must be among {tuple(PACKAGES)}, got {n!r}")
    return names


def _privileged() -> str:
    return "" if hasattr(os, "geteuid") and os.geteuid() == 0 else "sudo "


def _vulkan_loader() -> bool:
    try:
        ctypes.CDLL("libvulkan.so.1")
    except OSError:
        return False
    return True


def _icd_override() -> list[str] | None:
    """The ICD files named by the loader's environment variables, or ``None`` where none is set."""
    for var in ("VK_DRIVER_FILES", "VK_ICD_FILENAMES"):
        value = os.environ.get(var)
        if value:
            return [p for p in value.split(os.pathsep) if p]
    return None


def _vulkan_icds() -> list[str]:
    override = _icd_override()
    if override is not None:
        return [p for p in override if os.path.isfile(p)]
    found = []
    for d in _ICD_DIRS:
        found += glob.glob(os.path.join(d, "*.json"))
    return found


def _hidden_icds() -> str:
    """A reason where the loader's environment names driver files of which none exists, else ``""``."""
    override = _icd_override()
    if override is not None and not any(os.path.isfile(p) for p in override):
        return f"VK_ICD_FILENAMES / VK_DRIVER_FILES name no existing file ({os.pathsep.join(override)})"
    return ""
