"""The content hash of a source: which files of the contract it holds and their exact bytes."""

from __future__ import annotations

import hashlib
from pathlib import Path

from autovend.data.contract import CONTRACT_FILES

_CHUNK = 1 << 20


def contract_files(folder: Path) -> list[Path]:
    """The contract files present in `folder` (source.yaml and the table files), sorted by name."""
    return sorted((folder / name for name in CONTRACT_FILES if (folder / name).is_file()), key=lambda p: p.name)


def source_hash(path: str | Path) -> str:
    """Hex sha256 over the sorted (file name, file bytes) of the contract files in the folder `path`.

    Each file contributes its name, a NUL byte, its size as 8 big-endian bytes and its bytes, so
    renaming a file or moving bytes between files changes the hash. Other files are ignored.
    """
    digest = hashlib.sha256()
    for file in contract_files(Path(path)):
        digest.update(file.name.encode("utf-8") + b"\0")
        digest.update(file.stat().st_size.to_bytes(8, "big"))
        with file.open("rb") as handle:
            while chunk := handle.read(_CHUNK):
                digest.update(chunk)
    return digest.hexdigest()
