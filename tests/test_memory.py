import subprocess
import sys
import textwrap

import pytest

from autovend import memory

# In a fresh interpreter (the test process's heap has a history): a freed 16 MB array raises glibc's
# mmap threshold, so 1 MB arrays then come from the heap; small arrays kept between them stop the heap
# from shrinking at its top when the 1 MB ones are freed.
SCENARIO = textwrap.dedent(
    """
    import numpy as np
    from autovend import memory

    def rss():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * 4096 / 2**20

    big = np.ones(2 * 2**20)
    del big
    blocks, pins = [], []
    for _ in range(300):
        blocks.append(np.ones(2**17))
        pins.append(np.ones(200))
    held = rss()
    del blocks
    freed = rss()
    trimmed = memory.release_freed()
    print(held, freed, rss(), trimmed)
    """
)


@pytest.mark.skipif(not sys.platform.startswith("linux") or memory._malloc_trim() is None, reason="glibc only")
def test_freed_heap_blocks_go_back_to_the_system():
    out = subprocess.run([sys.executable, "-c", SCENARIO], capture_output=True, text=True, check=True).stdout.split()
    held, freed, released = (float(x) for x in out[:3])
    assert out[3] == "True"
    assert held - freed < 100  # the heap kept most of the 300 MB it no longer uses
    assert freed - released > 200  # and gave it back when asked


LEAN = textwrap.dedent(
    """
    import numpy as np
    import pyarrow as pa
    from autovend import memory

    def rss():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * 4096 / 2**20

    memory.lean_allocation()
    big = np.ones(2 * 2**20)  # would raise glibc's mmap threshold to 16 MB
    del big
    blocks, pins = [], []
    for _ in range(300):
        blocks.append(np.ones(2**17 + 1))  # just over 1 MiB
        pins.append(np.ones(200))
    held = rss()
    del blocks
    print(held, rss(), pa.default_memory_pool().backend_name)
    """
)


@pytest.mark.skipif(not sys.platform.startswith("linux") or memory._malloc_trim() is None, reason="glibc only")
def test_lean_allocation_maps_large_blocks_so_freeing_them_returns_the_memory_at_once():
    out = subprocess.run([sys.executable, "-c", LEAN], capture_output=True, text=True, check=True).stdout.split()
    held, freed = float(out[0]), float(out[1])
    assert held - freed > 250  # without lean_allocation the heap keeps them (the test above)
    assert out[2] == "system"
