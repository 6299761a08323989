"""``FileKeyStore`` on a real file system: permissions, atomic writes, real deletion, CAS semantics."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from carnet.adapters.keystores.files import FileKeyStore, StoredKey
from carnet.crypto.errors import KeyStoreCorrupt
from carnet.ports import WrappedKey


def _key(subject: str = "3f2a9c", *, tenant: str = "banque-a", version: int = 1, key_id: str = "kid1") -> StoredKey:
    return StoredKey(subject, key_id, WrappedKey(tenant, f"vault:v{version}:c2VjcmV0LXdyYXBwZWQ=", version))


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and p.name != ".lock")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "keys"


def test_round_trip_and_permissions(root: Path) -> None:
    old_umask = os.umask(0o022)
    try:
        store = FileKeyStore(root)
        key = _key()
        assert store.put_if_absent(key) == key
    finally:
        os.umask(old_umask)
    assert store.get("banque-a", "3f2a9c") == key
    assert FileKeyStore(root).get("banque-a", "3f2a9c") == key  # survives a restart
    [path] = _files(root)
    assert _mode(path) == 0o600
    assert _mode(root) == 0o700 and _mode(path.parent) == 0o700


def test_existing_loose_directory_is_tightened(root: Path) -> None:
    root.mkdir(mode=0o755)
    os.chmod(root, 0o755)
    FileKeyStore(root)
    assert _mode(root) == 0o700


def test_refuses_a_directory_inside_the_data_dir(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        FileKeyStore(tmp_path / "data" / "keys", data_dir=tmp_path / "data")
    FileKeyStore(tmp_path / "data-keys", data_dir=tmp_path / "data")


def test_put_if_absent_keeps_the_first_key(root: Path) -> None:
    store = FileKeyStore(root)
    first = _key(key_id="first")
    store.put_if_absent(first)
    assert store.put_if_absent(_key(key_id="second")) == first
    assert store.get("banque-a", "3f2a9c") == first


def test_replace_is_compare_and_swap(root: Path) -> None:
    store = FileKeyStore(root)
    old, new = _key(version=1), _key(version=2)
    store.put_if_absent(old)
    assert store.replace(old, new) is True
    assert store.get("banque-a", "3f2a9c") == new
    assert store.replace(old, _key(version=3)) is False  # stale view: refused
    store.delete("banque-a", "3f2a9c")
    assert store.replace(new, _key(version=3)) is False  # erased meanwhile: not resurrected
    assert _files(root) == []
    with pytest.raises(ValueError):
        store.replace(old, _key(key_id="other"))


def test_delete_removes_the_file(root: Path) -> None:
    store = FileKeyStore(root)
    store.put_if_absent(_key("s1"))
    store.put_if_absent(_key("s2"))
    [path, _] = _files(root)
    inode_content_before = path.read_bytes()
    assert b"vault:v1" in inode_content_before
    assert store.delete("banque-a", "s1") is True
    assert not path.exists() and store.get("banque-a", "s1") is None
    assert [p.name for p in _files(root)] == ["s-s2.json"]
    assert store.delete("banque-a", "s1") is False


def test_delete_overwrites_before_unlinking(root: Path) -> None:
    store = FileKeyStore(root)
    store.put_if_absent(_key())
    [path] = _files(root)
    survivor = root / "hardlink"  # a second name on the same inode shows what the bytes became
    os.link(path, survivor)
    store.delete("banque-a", "3f2a9c")
    assert not path.exists()
    assert set(survivor.read_bytes()) == {0}


def test_interrupted_write_keeps_the_old_entry(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = FileKeyStore(root)
    old = _key(version=1)
    store.put_if_absent(old)

    def crash(src: object, dst: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError, match="disk full"):
        store.replace(old, _key(version=2))
    monkeypatch.undo()
    assert store.get("banque-a", "3f2a9c") == old
    assert [p.name for p in _files(root)] == ["s-3f2a9c.json"]  # no temp file left behind


def test_scan_lists_one_tenant(root: Path) -> None:
    store = FileKeyStore(root)
    for s in ("s2", "s1", "s3"):
        store.put_if_absent(_key(s))
    store.put_if_absent(_key("s1", tenant="banque-b"))
    (root / "t-banque-a" / ".s-s4.json.abcd.tmp").write_text("partial")  # a crashed write's leftover
    assert [k.subject for k in store.scan("banque-a")] == ["s1", "s2", "s3"]
    assert [k.tenant for k in store.scan("banque-b")] == ["banque-b"]
    assert list(store.scan("nobody")) == []


def test_names_cannot_escape_the_directory(root: Path) -> None:
    store = FileKeyStore(root)
    key = _key("../../etc/passwd", tenant="..")
    store.put_if_absent(key)
    assert store.get("..", "../../etc/passwd") == key
    assert all(p.is_relative_to(root) for p in _files(root))
    assert len(_files(root)) == 1
    with pytest.raises(ValueError):
        store.get("", "s1")


def test_corrupt_or_misplaced_entries_are_refused(root: Path) -> None:
    store = FileKeyStore(root)
    store.put_if_absent(_key("s1"))
    [path] = _files(root)
    path.rename(path.with_name("s-s2.json"))  # an entry moved to another subject's name
    with pytest.raises(KeyStoreCorrupt):
        store.get("banque-a", "s2")
    path.with_name("s-s2.json").write_text("{not json")
    with pytest.raises(KeyStoreCorrupt):
        store.get("banque-a", "s2")
