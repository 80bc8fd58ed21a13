"""Cheaper machine-code generation on cpu: LLVM options that skip optional back-end passes.

On cpu Taichi hands each kernel to LLVM twice. The first time, once per machine, it optimises the kernel's
IR (LLVM's -O3 pipeline) and keeps the result in its offline cache. The second time, in *every* process, it
generates machine code from that IR, with LLVM's code generator at its default level: Taichi 1.7 keeps the
optimised IR, not the machine code, and exposes no setting for the code generator. The step kernel of a
world with articulated trees is a few hundred thousand LLVM instructions, and that second part alone took
about 20 s of its 25 s warm first step (measured on a 2-core cpu), a third of it in one pass, loop strength
reduction, whose analysis grows with the function's size.

:func:`apply` turns off the code generator's optional passes measured to cost compile time without buying
step time (:data:`DEFAULT_OPTIONS`): loop strength reduction (the IR pipeline, cached, already ran one
pass of it), CodeGenPrepare, machine loop-invariant code motion, the post-register-allocation scheduler and
x86 domain reassignment. It also turns off runtime unrolling in the optimisation pipeline: LLVM unrolled
every loop whose trip count is known only at run time (the step's loops over rows, contacts and samples)
eightfold with a remainder loop, which doubled the articulated kernel's IR (26 MB of cached IR text against
12 MB without) for step rates within noise. None of them changes what a floating-point operation computes, so
results are bit for bit the same (``tests/test_codegen.py``). Measured on the articulated step kernel: warm
25.4 s -> 13.2 s (code generator) -> 9.7 s (no runtime unrolling); on a new machine 68 s -> 52 to 56 s ->
33 s; step rates within noise (``docs/performance.md``). Kernels optimised under other options are kept apart
in Taichi's cache (:func:`cache_salt`).

LLVM reads such options from a command line that Taichi never parses. Its C entry point
``LLVMParseCommandLineOptions`` is linked into Taichi's Python module but not exported, so it is found
through the module's ELF symbol table (the wheels ship it unstripped) and called through ``ctypes``. Where
any of that is missing (another platform, a stripped build, another Taichi), nothing is changed and the
code generator keeps its defaults. The C entry point reports bad options to a null stream instead of
exiting, and :func:`apply` passes only options whose names the library holds, once per process.

The environment variable ``TAICHI_TERRA_LLVM_OPTIONS`` replaces the defaults: a space-separated list of LLVM
options, or an empty string for none (to compare against Taichi's own code generator).
"""
from __future__ import annotations

import ctypes
import mmap
import os
import struct
import sys
import warnings
import zlib
from pathlib import Path

import numpy as np

#: the options passed by default (LLVM 15 names): five passes of the code generator turned off, and no runtime
#: unrolling in the optimisation pipeline
DEFAULT_OPTIONS = (
    "-disable-lsr",
    "-disable-cgp",
    "-disable-machine-licm",
    "-disable-post-ra",
    "-disable-x86-domain-reassignment",
    "-unroll-runtime=false",
)
#: names of the options above that act on the code generator alone, after Taichi's cache: the IR it caches is
#: the same with and without them
CODEGEN_ONLY = frozenset({"disable-lsr", "disable-cgp", "disable-machine-licm", "disable-post-ra",
                          "disable-x86-domain-reassignment"})
ENV_VAR = "TAICHI_TERRA_LLVM_OPTIONS"

_applied: tuple[str, ...] | None = None

_SYMBOL = np.dtype([("name", "<u4"), ("info", "u1"), ("other", "u1"), ("shndx", "<u2"),
                    ("value", "<u8"), ("size", "<u8")])


def applied() -> tuple[str, ...]:
    """The options :func:`apply` passed to LLVM in this process (empty before it ran or where it could not)."""
    return _applied or ()


def requested() -> tuple[str, ...]:
    """The options :func:`apply` would pass: ``TAICHI_TERRA_LLVM_OPTIONS`` split on spaces where it is set,
    else :data:`DEFAULT_OPTIONS`."""
    env = os.environ.get(ENV_VAR)
    return tuple(env.split()) if env is not None else DEFAULT_OPTIONS


def apply() -> tuple[str, ...]:
    """Pass :func:`requested` to the LLVM inside Taichi, once per process (later calls return what the first
    passed). Call before Taichi compiles anything. Returns the options passed: only those that start with
    ``-`` and whose names the library holds; none where the entry point was not found. Options given through
    ``TAICHI_TERRA_LLVM_OPTIONS`` that are not passed are named in a ``UserWarning``."""
    global _applied
    if _applied is not None:
        return _applied
    _applied = ()
    wanted = requested()
    options = tuple(o for o in wanted if o.startswith("-"))
    found = None
    if options:
        try:
            found = _find_entry(taichi_library(), [_name(o) for o in options])
        except (OSError, ValueError, ImportError, AttributeError):
            found = None
    if found is not None:
        entry, known = found
        options = tuple(o for o in options if _name(o) in known)
        if options:
            argv = (ctypes.c_char_p * (len(options) + 1))(b"taichi_terra", *[o.encode() for o in options])
            entry(len(options) + 1, argv, None)
        _applied = options
    dropped = [o for o in wanted if o not in _applied]
    if dropped and os.environ.get(ENV_VAR) is not None:
        why = ("LLVM's option parser was not found in Taichi's library" if found is None else
               "each must start with '-' and name an option this Taichi's LLVM has")
        warnings.warn(f"{ENV_VAR}: not passed to LLVM: {' '.join(dropped)} ({why})", stacklevel=2)
    return _applied


def cache_salt(options=None) -> int:
    """The ``random_seed`` :func:`taichi_terra.init` gives Taichi on cpu so that kernels optimised under
    different LLVM options get different entries in Taichi's offline cache: 0 (Taichi's default) where none of
    ``options`` (default: :func:`applied`) changes the IR Taichi caches (:data:`CODEGEN_ONLY` do not), else a
    hash of those that do. Taichi's cache key covers its own settings, ``random_seed`` among them, but not
    LLVM's options, and without this a kernel cached under one set of options would be loaded under another.
    The seed is otherwise used by ``ti.random`` only, which taichi_terra's kernels do not call."""
    options = applied() if options is None else tuple(options)
    ir = sorted(o for o in options if _name(o) not in CODEGEN_ONLY)
    return zlib.crc32(" ".join(ir).encode()) & 0x7FFFFFFF if ir else 0


def _name(option: str) -> str:
    """An option's name: ``-regalloc=fast`` -> ``regalloc``."""
    return option.lstrip("-").split("=")[0]


def taichi_library() -> Path:
    """The path of Taichi's compiled Python module (where its LLVM is linked in)."""
    from taichi._lib.core import taichi_python

    return Path(taichi_python.__file__)


def _find_entry(library: Path, names: list[str]):
    """``(LLVMParseCommandLineOptions as a ctypes function, the option names among names that the library's
    strings hold)``, or None where the library is not a 64-bit little-endian ELF file with a symbol table
    naming the entry point and the module's init function."""
    if sys.platform != "linux":
        return None
    with open(library, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
        if m[:4] != b"\x7fELF" or m[4] != 2 or m[5] != 1:
            return None
        shoff, = struct.unpack_from("<Q", m, 0x28)
        shentsize, shnum = struct.unpack_from("<HH", m, 0x3A)
        sections = [struct.unpack_from("<IIQQQQIIQQ", m, shoff + k * shentsize) for k in range(shnum)]
        symtabs = [s for s in sections if s[1] == 2]  # SHT_SYMTAB
        if not symtabs:
            return None
        symtab = symtabs[0]
        strtab = sections[symtab[6]]
        str_start, str_end = strtab[4], strtab[4] + strtab[5]
        init_name = "PyInit_" + library.name.split(".")[0]
        value = {}
        for name in ("LLVMParseCommandLineOptions", init_name):
            at = m.find(b"\0" + name.encode() + b"\0", str_start, str_end)
            if at < 0:
                return None
            symbols = np.frombuffer(m, _SYMBOL, symtab[5] // _SYMBOL.itemsize, symtab[4])
            hits = np.flatnonzero((symbols["name"] == at + 1 - str_start) & ((symbols["info"] & 0xF) == 2))
            found = int(symbols["value"][hits[0]]) if len(hits) == 1 else None
            del symbols  # a view of the file: released before the file is closed
            if found is None:
                return None
            value[name] = found
        # LLVM's option names are string constants of the read-only sections (flag 2, SHF_ALLOC, and no
        # write or execute flag)
        rodata = [(s[4], s[4] + s[5]) for s in sections if s[1] == 1 and s[2] & 0x7 == 0x2]
        known = {n for n in names if any(m.find(n.encode() + b"\0", a, b) >= 0 for a, b in rodata)}
    module = ctypes.CDLL(str(library))
    base = ctypes.cast(getattr(module, init_name), ctypes.c_void_p).value - value[init_name]
    entry = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.POINTER(ctypes.c_char_p), ctypes.c_char_p)(
        base + value["LLVMParseCommandLineOptions"])
    return entry, known
