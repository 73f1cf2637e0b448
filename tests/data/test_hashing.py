import hashlib
import shutil

from autovend.data.hashing import contract_files, source_hash
from tests.data.make_source import write_source


def test_hash_is_sha256_of_sorted_names_and_bytes(tmp_path):
    folder = tmp_path / "src"
    folder.mkdir()
    (folder / "source.yaml").write_bytes(b"name: a\n")
    (folder / "orders.csv").write_bytes(b"x\n")
    expected = hashlib.sha256()
    for name, data in [("orders.csv", b"x\n"), ("source.yaml", b"name: a\n")]:
        expected.update(name.encode() + b"\0" + len(data).to_bytes(8, "big") + data)
    assert source_hash(folder) == expected.hexdigest()


def test_hash_ignores_other_files_and_location(tmp_path):
    folder = write_source(tmp_path / "a")
    before = source_hash(folder)
    (folder / "README.txt").write_text("notes")
    (folder / "orders_old.csv").write_text("whatever")
    assert source_hash(folder) == before
    copy = shutil.copytree(folder, tmp_path / "b")
    assert source_hash(copy) == before
    assert [p.name for p in contract_files(folder)] == [
        "calendar.csv",
        "inventory.csv",
        "machines.csv",
        "orders.csv",
        "products.csv",
        "source.yaml",
        "weather.csv",
    ]


def test_hash_changes_with_one_byte_or_a_rename(tmp_path):
    folder = write_source(tmp_path / "a")
    before = source_hash(folder)
    orders = folder / "orders.csv"
    orders.write_bytes(orders.read_bytes().replace(b"4.50", b"4.60", 1))
    changed = source_hash(folder)
    assert changed != before
    (folder / "weather.csv").rename(folder / "calendar.parquet")  # same bytes, other name
    (folder / "calendar.csv").unlink()
    assert source_hash(folder) != changed
