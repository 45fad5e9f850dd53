"""Whoosh segments read from a memory map in place (engine/channels/mapped.py) read as Whoosh's copies do."""

from __future__ import annotations

import io
import mmap
import os
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from whoosh import fields
from whoosh.filedb.filestore import FileStorage
from whoosh.qparser import QueryParser

from engine.channels.mapped import MappedStorage, Region

_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("read"), st.integers(min_value=-1, max_value=40)),
        st.tuples(st.just("readline"), st.integers(min_value=-1, max_value=40)),
        st.tuples(st.just("seek"), st.integers(min_value=0, max_value=60), st.sampled_from([os.SEEK_SET, os.SEEK_CUR])),
        st.tuples(st.just("get"), st.integers(min_value=0, max_value=50), st.integers(min_value=0, max_value=20)),
    ),
    max_size=30,
)


# The same examples every run, none remembered from an earlier one.
@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(st.binary(min_size=1, max_size=120), st.integers(min_value=0, max_value=40), _OPS)
def test_a_region_reads_like_a_copy_of_its_bytes(data: bytes, offset: int, ops: list[tuple[object, ...]]) -> None:
    padded = b"\x00" * offset + data + b"\n\xff" * 3  # the region sits inside a larger map
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "segment.bin"
        path.write_bytes(padded)
        with path.open("rb") as handle:
            source = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        region, copy = Region(source, offset, len(data), "region"), io.BytesIO(data)
        for op in ops:
            if op[0] == "read":
                assert region.read(op[1]) == copy.read(op[1])
            elif op[0] == "readline":
                assert region.readline(op[1]) == copy.readline(op[1])
            elif op[0] == "seek":
                wanted = min(int(op[1]) + (copy.tell() if op[2] == os.SEEK_CUR else 0), len(data))
                copy.seek(wanted)
                region.seek(int(op[1]), int(op[2]))  # type: ignore[arg-type]
            else:
                position, length = int(op[1]), int(op[2])  # type: ignore[call-overload]
                assert region.get(position, length) == data[position : position + length]
            assert region.tell() == copy.tell()
        source.close()


def test_an_index_opened_mapped_finds_what_whooshs_own_storage_finds(tmp_path: Path) -> None:
    schema = fields.Schema(path=fields.ID(stored=True, unique=True), body=fields.TEXT(stored=True))
    index = FileStorage(str(tmp_path)).create_index(schema)
    for batch in range(3):  # three segments, each a compound file
        writer = index.writer()
        for n in range(40):
            writer.add_document(path=f"{batch}/{n}.md", body=f"note {n} of batch {batch} about offline sync {'merge ' * (n % 3)}")
        writer.commit(merge=False)
    assert sum(name.endswith(".seg") for name in os.listdir(tmp_path)) == 3

    def found(storage: FileStorage) -> list[tuple[str, str]]:
        opened = storage.open_index()
        with opened.searcher() as searcher:
            query = QueryParser("body", opened.schema).parse("sync merge")
            hits = [(hit["path"], hit["body"]) for hit in searcher.search(query, limit=None)]
        opened.close()
        return hits

    mapped = found(MappedStorage(str(tmp_path)))
    assert mapped == found(FileStorage(str(tmp_path))) and len(mapped) == 78
