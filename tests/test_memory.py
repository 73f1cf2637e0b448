import subprocess
import sys
import textwrap

import pytest

from autovend import memory

# Each scenario runs in a fresh interpreter. 600 blocks of about 1 MiB are allocated and every other one is
# freed: the freed blocks are holes between live ones, so the heap cannot give them back by shrinking at its
# top; only a trim (or blocks mapped on their own) returns them.
SCENARIO = textwrap.dedent(
    """
    import ctypes, ctypes.util, sys
    import numpy as np
    import pyarrow as pa
    from autovend import memory

    def rss():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * 4096 / 2**20

    if sys.argv[1] == "lean":
        memory.lean_allocation()
    else:  # glibc's mmap threshold at its dynamic ceiling, where it drifts as large arrays are freed
        ctypes.CDLL(ctypes.util.find_library("c")).mallopt(-3, 32 * 2**20)
    blocks = [np.ones(2**17 + 1) for _ in range(600)]
    held = rss()
    del blocks[::2]
    freed = rss()
    trimmed = memory.release_freed()
    print(held, freed, rss(), trimmed, pa.default_memory_pool().backend_name)
    """
)

GLIBC = pytest.mark.skipif(not sys.platform.startswith("linux") or memory._malloc_trim() is None, reason="glibc only")


def _run(mode: str) -> list[str]:
    return subprocess.run(
        [sys.executable, "-c", SCENARIO, mode], capture_output=True, text=True, check=True
    ).stdout.split()


@pytest.mark.slow
@GLIBC
def test_freed_heap_blocks_go_back_to_the_system_when_released():
    held, freed, released, trimmed, _ = _run("heap")
    assert trimmed == "True"
    assert float(held) - float(freed) < 50  # the heap keeps the 300 MB of holes
    assert float(freed) - float(released) > 250  # and gives them back when asked


@GLIBC
def test_lean_allocation_maps_large_blocks_so_freeing_them_returns_the_memory_at_once():
    held, freed, _, _, pool = _run("lean")
    assert float(held) - float(freed) > 250
    assert pool == "system"


REUSE = textwrap.dedent(
    """
    import resource
    import numpy as np
    from autovend import memory

    memory.lean_allocation()
    x = np.ones(2**16)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(200):  # temporaries of 512 KiB made and freed, as numpy's passes over blocks of cells make them
        a = np.ones(2**16)
        b = a * 2.0
        c = a + b
        del a, b, c
    print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
    """
)


@GLIBC
def test_lean_allocation_reuses_the_heap_for_blocks_below_its_mmap_threshold():
    """Each block would fault its 128 pages in again if the heap's top went back to the system at every free."""
    faults = int(subprocess.run([sys.executable, "-c", REUSE], capture_output=True, text=True, check=True).stdout)
    assert faults < 3000  # about 70,000 (600 blocks x 128 pages) with glibc's trim threshold of 128 KB
