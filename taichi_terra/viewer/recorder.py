"""Write rendered frames to disk: numbered PNGs, an animated GIF (pillow) or an MP4 (ffmpeg).

The format follows the path: ``*.gif``, ``*.mp4``, or a directory (no suffix) that receives
``frame_00000.png``, ``frame_00001.png``, ... Paths are checked when the recorder is made, so a bad one
fails before any simulation runs.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np

FORMATS = (".gif", ".mp4", "directory of .png frames")


def check_output_path(name: str, path, suffixes=(".gif", ".mp4", "")) -> Path:
    """Validate an output path: a known suffix, an existing writable parent folder, not an existing
    folder where a file is meant (or the reverse). Returns it as a Path."""
    if not isinstance(path, (str, os.PathLike)) or not str(path):
        raise TypeError(f"{name} must be a non-empty path, got {path!r}")
    p = Path(path)
    if p.suffix.lower() not in suffixes:
        wanted = ", ".join(repr(s) if s else "a folder (no suffix)" for s in suffixes)
        raise ValueError(f"{name}: unsupported file type {p.suffix!r} in {str(p)!r}; use {wanted}")
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise ValueError(f"{name}: folder {str(parent)!r} does not exist")
    try:  # create and remove a file there: permission bits alone do not tell (root, read-only mounts)
        fd, probe = tempfile.mkstemp(dir=parent, prefix=".write_check_")
        os.close(fd)
        os.remove(probe)
    except OSError as exc:
        raise ValueError(f"{name}: folder {str(parent)!r} is not writable ({exc.strerror})") from None
    if p.suffix and p.is_dir():
        raise ValueError(f"{name}: {str(p)!r} is a folder, not a file")
    if p.exists() and not os.access(p, os.W_OK):
        raise ValueError(f"{name}: {str(p)!r} exists and is not writable")
    return p


class Recorder:
    """Collects frames (uint8 RGB, shape (height, width, 3)) and writes them at ``fps`` frames per second.

    GIFs are written when the recorder is closed; PNG frames and MP4 input as frames arrive. MP4 needs an
    ``ffmpeg`` executable on the PATH (checked here).
    """

    def __init__(self, path, fps: float = 30.0):
        self.path = check_output_path("record", path)
        if isinstance(fps, bool) or not isinstance(fps, (int, float)) or not 0.0 < fps <= 240.0:
            raise ValueError(f"fps must be a number in (0, 240], got {fps!r}")
        self.fps = float(fps)
        self.kind = {".gif": "gif", ".mp4": "mp4", "": "png"}[self.path.suffix.lower()]
        if self.kind == "mp4" and shutil.which("ffmpeg") is None:
            raise ValueError("record: writing .mp4 needs an ffmpeg executable on the PATH; "
                             "record to .gif or to a folder of PNG frames instead")
        self.frames = 0
        self._gif: list = []
        self._proc = None
        self._shape = None

    def add(self, image: np.ndarray) -> None:
        """Append one frame (uint8, shape (height, width, 3))."""
        from PIL import Image

        img = np.asarray(image)
        if img.dtype != np.uint8 or img.ndim != 3 or img.shape[2] != 3:
            raise ValueError(f"image must be uint8 of shape (height, width, 3), got {img.dtype} {img.shape}")
        if self._shape is None:
            self._shape = img.shape
            if self.kind == "png":
                self.path.mkdir(exist_ok=True)
            elif self.kind == "mp4":
                h, w = img.shape[:2]
                self._proc = subprocess.Popen(
                    ["ffmpeg", "-y", "-loglevel", "error", "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", f"{w}x{h}",
                     "-r", f"{self.fps:g}", "-i", "-", "-pix_fmt", "yuv420p", "-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2",
                     str(self.path)], stdin=subprocess.PIPE)
        elif img.shape != self._shape:
            raise ValueError(f"image: every frame must have the shape of the first, {self._shape}, got {img.shape}")
        if self.kind == "png":
            Image.fromarray(img).save(self.path / f"frame_{self.frames:05d}.png")
        elif self.kind == "mp4":
            self._proc.stdin.write(np.ascontiguousarray(img).tobytes())
        else:
            self._gif.append(Image.fromarray(img).quantize(colors=255, method=Image.Quantize.MEDIANCUT, dither=0))
        self.frames += 1

    def close(self) -> Path:
        """Finish the file(s) and return the path."""
        if self.kind == "gif" and self._gif:
            ms = round(1000.0 / self.fps)
            self._gif[0].save(self.path, save_all=True, append_images=self._gif[1:], duration=ms, loop=0,
                              optimize=True)
            self._gif = []
        elif self.kind == "mp4" and self._proc is not None:
            self._proc.stdin.close()
            if self._proc.wait() != 0:
                raise RuntimeError(f"ffmpeg failed writing {self.path}")
            self._proc = None
        return self.path
