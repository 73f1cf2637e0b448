"""Handing freed memory back to the operating system between the phases of a large computation.

The calibration's big arrays come and go in phases (the check's text columns, the panel's working
arrays, each pass of the product split). glibc keeps freed blocks below its mmap threshold (which it
raises up to 32 MB as large blocks are freed) in its heap, and Arrow's memory pool keeps its segments,
so the resident size drifts above the live data by hundreds of MB at operator scale. `release_freed`
asks both to return their free pages; it changes no value, only what the process holds.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # mallopt's parameter numbers in glibc's malloc.h
MMAP_THRESHOLD = 1 << 20  # blocks of this size or more are mapped from the system by `lean_allocation`
TRIM_THRESHOLD = 8 << 20  # free memory at the heap's top kept for the next blocks (`lean_allocation`)


@functools.cache
def _libc(function: str) -> ctypes._CFuncPtr | None:  # type: ignore[name-defined]
    """A glibc function by name, or None where the C library has none (musl, macOS, Windows)."""
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        return getattr(ctypes.CDLL(name), function, None)
    except OSError:
        return None


def _malloc_trim() -> ctypes._CFuncPtr | None:  # type: ignore[name-defined]
    return _libc("malloc_trim")


def lean_allocation() -> None:
    """Set this process up for operator-scale tables: large blocks come from and go back to the system.

    Blocks of MMAP_THRESHOLD or more are mapped on their own and unmapped when freed (glibc would
    otherwise raise that threshold to 32 MB as large arrays are freed and keep the rest in a heap that
    fragments), and Arrow allocates through the same C allocator instead of its own pool. Process-wide,
    so the pipeline's stages call it and the library functions do not; values are unchanged.

    Setting that threshold also stops glibc from moving its trim threshold with it, which then stays at
    128 KB: every free at the heap's top beyond that went back to the system, and the next array's pages
    were faulted in again. Arrays of a few hundred KB, which numpy's passes over blocks of cells make by the
    dozen, paid that each time (the split's E-step took 1.5 times as long). Up to TRIM_THRESHOLD of free
    memory now stays at the heap's top between them; `release_freed` still returns it between phases.
    """
    import pyarrow as pa

    mallopt = _libc("mallopt")
    if mallopt is not None:
        mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)
        mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD)
    pa.set_memory_pool(pa.system_memory_pool())


def release_freed() -> bool:
    """Return the free pages of Arrow's pool and of the C heap to the system; True if the heap was trimmed."""
    import pyarrow as pa

    pa.default_memory_pool().release_unused()
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)  # glibc >= 2.8 also releases free pages inside the heap, not only at its top
    return True
