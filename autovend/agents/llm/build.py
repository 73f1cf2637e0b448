"""Is the installed llama.cpp a portable build? What its CPU backend was compiled to use, read from the library.

    python -m autovend.agents.llm.build          # prints the features; exit 1 if the build is tied to this CPU

llama.cpp's CPU backend reports the instruction-set extensions it was compiled with (`llama_print_system_info`,
compile-time flags such as `__AVX512F__`, not what the CPU offers). `make local` builds it with
`CMAKE_ARGS=-DGGML_NATIVE=OFF`: for x86-64 that is SSE3, SSSE3, AVX, AVX2, F16C, FMA and BMI2 (llama.cpp's
non-native defaults, the x86-64-v3 level). A native build (`-march=native`, llama.cpp's default when it compiles
for the machine it runs on) adds whatever that machine advertises: AVX-512, AVX-VNNI, AMX. Such a library dies
with SIGILL (exit 132) on the first completion on a machine, or under a hypervisor, that advertises an extension
it does not allow; the portable one runs on any x86-64-v3 CPU.
"""

from __future__ import annotations

import argparse
import sys

# Extensions the portable x86-64 build leaves out; a build that uses any of them was compiled for one CPU.
NATIVE_ONLY = ("AVX_VNNI", "AVX512", "AVX512_VBMI", "AVX512_VNNI", "AVX512_BF16", "AMX_INT8")
REBUILD_HINT = "rebuild it portable: `make local` (CMAKE_ARGS=-DGGML_NATIVE=OFF), docs/llm-agents.md"


def system_info() -> str:
    """llama.cpp's own description of its backends and their compiled features (imports llama_cpp)."""
    import llama_cpp  # type: ignore[import-not-found,unused-ignore]  # the [local] extra

    info = llama_cpp.llama_print_system_info()
    return info.decode("utf-8", "replace") if isinstance(info, bytes) else str(info)


def compiled_features(info: str) -> dict[str, set[str]]:
    """Backend name -> the features it reports as 1, from `system_info()`'s "CPU : AVX = 1 | AVX2 = 1 | ..."."""
    backends: dict[str, set[str]] = {}
    name = ""
    for part in info.split("|"):
        part = part.strip()
        if " : " in part:  # "CPU : SSE3 = 1" opens a backend's list
            name, part = (s.strip() for s in part.split(" : ", 1))
        if "=" in part and name:
            key, value = (s.strip() for s in part.split("=", 1))
            if value == "1":
                backends.setdefault(name, set()).add(key)
    return backends


def native_features(info: str) -> list[str]:
    """The features of the CPU backend that a portable build does not use (empty for a portable build)."""
    cpu = compiled_features(info).get("CPU", set())
    return [f for f in NATIVE_ONLY if f in cpu]


def main(argv: list[str] | None = None) -> int:
    """Print the build's features; exit 1 (saying why and what to do) if it was compiled for this machine's CPU."""
    parser = argparse.ArgumentParser(prog="python -m autovend.agents.llm.build", description=__doc__.split("\n")[0])
    parser.add_argument("--quiet", action="store_true", help="print only a problem")
    args = parser.parse_args(argv)
    try:
        info = system_info()
    except ImportError as exc:
        print(f"llama-cpp-python is not installed ({exc}); `make local` installs it", file=sys.stderr)
        return 1
    native = native_features(info)
    if native:
        print(
            f"the installed llama.cpp was compiled for this machine's CPU ({', '.join(native)}): it dies with "
            f"SIGILL where these are advertised but not allowed; {REBUILD_HINT}",
            file=sys.stderr,
        )
        return 1
    if not args.quiet:
        print(f"llama.cpp is a portable build: {info.strip()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
