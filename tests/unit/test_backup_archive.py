"""The backup archive format: manifest first, every member checked, nothing lands outside the target,
holes stay holes."""

from __future__ import annotations

import io
import json
import os
import tarfile
from datetime import UTC, datetime
from pathlib import Path

import pytest

from carnet.errors import BackupCorrupt
from carnet.services.backup.archive import (
    MANIFEST,
    Manifest,
    extract_verified,
    inventory,
    read_manifest,
    write_archive,
)

AT = datetime(2026, 5, 1, 2, 0, tzinfo=UTC)


def _staging(root: Path) -> Path:
    (root / "vectors" / "segments" / "empty").mkdir(parents=True)
    (root / "vectors" / "edge_config.json").write_text("{}")
    sparse = root / "vectors" / "segments" / "chunk.mmap"
    with sparse.open("wb") as fh:  # 8 MiB long, 4 bytes of data
        fh.seek(4 << 20)
        fh.write(b"data")
        fh.truncate(8 << 20)
    (root / "catalog.sqlite3").write_bytes(b"catalog bytes")
    return root


def _manifest(staging: Path) -> Manifest:
    dirs, members = inventory(staging)
    return Manifest(AT, "0.1.0", "qdrant-edge-py 0.9.0", "model", 384, 2, {"t": "~tenant-hash-key"}, dirs, members)


@pytest.mark.parametrize("compress", [True, False])
def test_round_trip_keeps_every_file_its_holes_and_empty_directories(tmp_path: Path, compress: bool) -> None:
    staging = _staging(tmp_path / "staging")
    manifest = _manifest(staging)
    archive = tmp_path / ("b.tar.gz" if compress else "b.tar")
    write_archive(staging, manifest, archive, compress=compress)
    assert read_manifest(archive) == manifest
    out = tmp_path / "out"
    assert extract_verified(archive, out) == manifest
    assert (out / "vectors" / "segments" / "empty").is_dir()
    chunk = out / "vectors" / "segments" / "chunk.mmap"
    assert chunk.read_bytes() == (staging / "vectors" / "segments" / "chunk.mmap").read_bytes()
    assert os.stat(chunk).st_blocks * 512 <= 1 << 20  # written back sparse: one block of data in 8
    assert (out / "catalog.sqlite3").read_bytes() == b"catalog bytes"


def test_the_manifest_says_no_key_is_inside(tmp_path: Path) -> None:
    staging = _staging(tmp_path / "staging")
    write_archive(staging, _manifest(staging), tmp_path / "b.tar", compress=False)
    with tarfile.open(tmp_path / "b.tar") as tf:
        first = tf.next()
        assert first is not None and first.name == MANIFEST
        doc = json.loads(tf.extractfile(first).read())  # type: ignore[union-attr]
    assert doc["keys_included"] is False and "No key is in this archive" in doc["note"]


def test_an_altered_member_is_refused(tmp_path: Path) -> None:
    staging = _staging(tmp_path / "staging")
    archive = tmp_path / "b.tar"
    write_archive(staging, _manifest(staging), archive, compress=False)
    raw = bytearray(archive.read_bytes())
    at = raw.index(b"catalog bytes")
    raw[at] ^= 0x01
    archive.write_bytes(bytes(raw))
    with pytest.raises(BackupCorrupt, match="does not match its checksum"):
        extract_verified(archive, tmp_path / "out")


def test_a_truncated_archive_is_refused(tmp_path: Path) -> None:
    staging = _staging(tmp_path / "staging")
    archive = tmp_path / "b.tar.gz"
    write_archive(staging, _manifest(staging), archive, compress=True)
    archive.write_bytes(archive.read_bytes()[: archive.stat().st_size // 2])
    with pytest.raises(BackupCorrupt):
        extract_verified(archive, tmp_path / "out")


def _forged(path: Path, manifest_doc: dict[str, object], members: dict[str, bytes]) -> None:
    with tarfile.open(path, "w") as tf:
        for name, body in [(MANIFEST, json.dumps(manifest_doc).encode()), *members.items()]:
            info = tarfile.TarInfo(name)
            info.size = len(body)
            tf.addfile(info, io.BytesIO(body))


def test_a_member_outside_the_manifest_or_the_layout_is_refused(tmp_path: Path) -> None:
    staging = _staging(tmp_path / "staging")
    doc = _manifest(staging).as_dict()
    _forged(tmp_path / "extra.tar", doc, {"catalog.sqlite3": b"catalog bytes", "vectors/evil": b"x"})
    with pytest.raises(BackupCorrupt, match="does not list"):
        extract_verified(tmp_path / "extra.tar", tmp_path / "out1")
    doc["members"] = {"../escape": {"size": 1, "sha256": "0" * 64}}
    _forged(tmp_path / "escape.tar", doc, {"../escape": b"x"})
    with pytest.raises(BackupCorrupt, match="unexpected path"):
        extract_verified(tmp_path / "escape.tar", tmp_path / "out2")
    assert not (tmp_path / "escape").exists()


def test_a_file_that_is_not_a_carnet_backup_is_refused(tmp_path: Path) -> None:
    (tmp_path / "x.tar").write_bytes(b"hello")
    with pytest.raises(BackupCorrupt):
        read_manifest(tmp_path / "x.tar")
    with pytest.raises(BackupCorrupt, match="no backup"):
        read_manifest(tmp_path / "missing.tar")
