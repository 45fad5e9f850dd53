"""The index on disk: the catalog, the channels derived from it, and the manifest that says what they reflect.

Opening loops over the channels through their one Protocol: each channel module's
`open_channel` readies it (rebuilding what cannot be read), then `sync` redoes what a
killed run or another process left undone. The manifest records, per channel, the
catalog generation it reflects, so a lagging channel is found at open.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import time
from collections.abc import Callable, Collection
from pathlib import Path

from engine.catalog import Catalog
from engine.channels import fulltext as fulltext_module
from engine.channels import graph as graph_module
from engine.channels import vectors as vectors_module
from engine.channels.base import Channel, ChannelContext
from engine.channels.fulltext import FulltextChannel
from engine.channels.graph import GraphChannel
from engine.channels.vectors import VectorChannel
from engine.config import EngineConfig
from engine.embedder import Embedder
from engine.errors import ConfigError, IndexCorrupt, IndexWriteFailed
from engine.lexicon import Lexicon
from engine.records import ChannelName
from engine.storage import Manifest, load_index_json, salvage_embeddings

__all__ = ["Indexes"]

log = logging.getLogger("cairn.indexes")


class Indexes:
    """The catalog and its three channels, opened, repaired and kept in step with one manifest."""

    def __init__(
        self,
        index_dir: Path,
        config: EngineConfig,
        embedder: Embedder | None,
        lexicon: Lexicon,
        *,
        writable: bool,
        writer: Callable[[], str | None],
    ) -> None:
        """Open (or create) every part of the index; `writable` says this process may repair what it finds.

        Raises:
            IndexCorrupt: a part is damaged and another process (`writer()`) holds the index.
        """
        self.index_dir = index_dir
        self._embedder = embedder
        self._writable = writable
        self._writer = writer
        self.repairs: list[str] = []
        self.catalog_replaced = False
        self._closed: set[str] = set()  # the channels `close` released
        self._manifest_path = index_dir / "manifest.json"
        self.manifest, problem = Manifest.load(self._manifest_path)
        if problem:
            self.repairs.append(problem)
        self.catalog = self._open_catalog()
        context = ChannelContext(
            index_dir=index_dir,
            config=config,
            catalog=self.catalog,
            embedder=embedder,
            lexicon=lexicon,
            discard=self.manifest.rebuild_derived,
            writable=writable,
            recorded_model=self.manifest.model_id,
        )
        if writable and self.manifest.rebuild_derived:
            self.manifest.generations.clear()
        self.fulltext, note_fulltext = fulltext_module.open_channel(context)
        self.vectors, note_vectors = vectors_module.open_channel(context)
        self.graph, note_graph = graph_module.open_channel(context)
        self.repairs.extend(note for note in (note_fulltext, note_vectors, note_graph) if note)
        self.sync()

    @property
    def channels(self) -> dict[ChannelName, Channel]:
        """Every channel by name."""
        return {"fulltext": self.fulltext, "vectors": self.vectors, "graph": self.graph}

    # -- whose index ------------------------------------------------------------------
    def claim(self, vault: Path) -> None:
        """Record that this index is `vault`'s, or refuse it when it was built for another vault.

        An index holds one vault's notes: a second vault opening it (one `--index-dir` or
        `CAIRN_INDEX_DIR` for every vault) would answer with the first one's notes, and
        each reindex would swap the whole index. The vault is recorded by its path and by
        its place relative to the index, so a vault and its index moved or copied
        together (an index inside the vault, above all) stay one; a vault moved alone,
        whose recorded folder is gone, takes its index along.

        Raises:
            ConfigError: the index belongs to another vault that is still there.
        """
        vault = vault.resolve()
        here = self.index_dir.resolve()
        record = {"path": str(vault), "relative": os.path.relpath(vault, here)}
        stored = self.catalog.get_meta("vault")
        owner = _recorded_vault(stored)
        if owner is not None and not _same_vault(owner, vault, here):
            raise ConfigError(
                f"the index folder {self.index_dir} holds the index of another vault, {owner['path']}; "
                f"give {vault} an index folder of its own (--index-dir, CAIRN_INDEX_DIR or the config's "
                "index_dir name one folder per vault)"
            )
        wanted = json.dumps(record, sort_keys=True)
        if self._writable and stored != wanted:
            try:
                with self.catalog.transaction() as conn:
                    self.catalog.set_meta("vault", wanted, conn)
            except (IndexWriteFailed, sqlite3.Error) as exc:  # read-only or full: the next writer records it
                log.info("could not record the index's vault: %s", exc)

    # -- the catalog ------------------------------------------------------------------
    def _open_catalog(self) -> Catalog:
        path = self.index_dir / "catalog.sqlite"
        lost = self._lost_catalog(path)
        reason = lost
        if not lost:
            try:
                catalog = Catalog(path)
                if _checked_before(path) or catalog.check() == "ok":
                    _remember_checked(path)
                    return catalog
                catalog.close()
                reason = "integrity check failed"
            except IndexCorrupt as exc:
                reason = str(exc)
        if not self._writable:
            raise IndexCorrupt(f"catalog is damaged ({reason}) and {self._writer() or 'another process'} is writing it")
        aside = path.with_name(f"catalog.damaged-{int(time.time())}.sqlite")
        for suffix in ("", "-wal", "-shm"):
            source = Path(f"{path}{suffix}")
            if source.exists():
                # A journal left without its database would be replayed into the new one.
                os.replace(source, Path(f"{aside}{suffix}"))
        self.manifest = Manifest()
        self.catalog_replaced = True
        catalog = Catalog(path)
        if lost:
            self.repairs.append(f"{lost}; rebuilt from the notes (the next reindex embeds them again)")
            return catalog
        salvaged = 0
        for model_id, rows in salvage_embeddings(aside):
            catalog.store_embeddings(model_id, rows)
            salvaged += len(rows)
        kept = f"; {salvaged} cached embeddings recovered" if salvaged else ""
        self.repairs.append(f"catalog was damaged ({reason}); moved aside to {aside.name} and rebuilt from the notes{kept}")
        return catalog

    def _lost_catalog(self, path: Path) -> str:
        """Why the catalog is gone while the indexes derived from it are still there ("" if it is not).

        SQLite opens a missing or 0-byte file as a new, empty database; taken at its word,
        the repair at open would empty every other index to match it.
        """
        derived = ("fulltext", "vectors.faiss", "graph.pickle", "manifest.json")
        if not any((self.index_dir / name).exists() for name in derived):
            return ""  # a new index (or one killed while it was being created)
        try:
            size = path.stat().st_size
        except FileNotFoundError:
            return f"catalog is missing ({path.name} was deleted) but the indexes built from it are there"
        except OSError:
            return ""  # unreadable for another reason: opening it says which
        if size == 0:
            return f"catalog is empty ({path.name} has 0 bytes) but the indexes built from it are there"
        return ""

    # -- keeping in step -----------------------------------------------------------------
    def sync(self, *, writer: bool = False) -> None:
        """Bring every channel in step with the catalog (after a kill, or a reindex that failed half-way).

        Repairs are made by the process that opened the index as its writer, or by one that
        holds the writer lock now (`writer`: it became the writer after another was killed).
        """
        if writer:
            self._writable = True
        generation = self.catalog.generation
        if not (self.index_dir / "vectors.faiss").exists():
            self.manifest.generations.pop("vectors", None)
        changed = False
        for name, channel in self.channels.items():
            if name == "vectors" and self._embedder is None:
                continue
            recorded = self.manifest.generations.get(name)
            note = channel.sync(self.catalog, lagging=recorded != generation, writable=self._writable)
            if note and recorded is not None:
                self.repairs.append(note)
            if self._writable and name != "graph" and recorded != generation:
                self.manifest.generations[name] = generation
                changed = True
        if self._writable and self._embedder is not None and self.manifest.model_id != self._embedder.model_id:
            self.manifest.model_id = self._embedder.model_id
            changed = True
        if changed:
            self.save_manifest()

    def lagging(self) -> bool:
        """Whether the manifest on disk says a channel is behind the catalog: a writer was
        killed between writing the catalog and committing what it derives from it."""
        on_disk, _problem = Manifest.load(self._manifest_path)
        generation = self.catalog.generation
        names = ("fulltext", "vectors") if self._embedder is not None else ("fulltext",)
        return any(on_disk.generations.get(name) != generation for name in names)

    def reload(self) -> None:
        """Pick up what another process wrote to every channel."""
        for channel in self.channels.values():
            channel.reload(self.catalog)

    def commit(self) -> None:
        """Record that the channels reflect the catalog as it is now; save a rebuilt graph."""
        generation = self.catalog.generation
        self.manifest.generations["fulltext"] = generation
        if self._embedder is not None:
            self.manifest.generations["vectors"] = generation
            self.manifest.model_id = self._embedder.model_id
        self.save_manifest()
        try:
            self.graph.save(only_rebuilt=True)
        except OSError as exc:
            log.warning("could not save the graph: %s", exc)

    def save_manifest(self) -> None:
        """Write the manifest (a failure is logged: the next open checks the channels anyway)."""
        try:
            self.manifest.save(self._manifest_path)
        except OSError as exc:
            log.warning("could not write %s: %s", self._manifest_path, exc)

    def state(self) -> tuple[object, ...]:
        """What changes when any process writes the index: catalog generation, manifest, vectors."""
        stamps: list[object] = [self.catalog.generation]
        for name in ("manifest.json", "vectors.faiss", "vectors.delta.npz"):
            try:
                st = (self.index_dir / name).stat()
                stamps.append((st.st_mtime_ns, st.st_size))
            except OSError:
                stamps.append(None)
        return tuple(stamps)

    def close(self, *, keep: Collection[str] = (), vouch: bool = False) -> None:
        """Release every channel but those named in `keep`, and the catalog once none is
        kept; a channel is closed once however often this is called.

        `vouch`: this process is the index's writer and closes cleanly. A catalog it wrote
        then changed only through SQLite's own commits since it was checked at open, so its
        new state is remembered as checked: the next open skips the integrity check, which
        reads the whole file (11 s at 50k notes). A process killed mid-session vouches for
        nothing: once its writes reach the file (SQLite moves them there from the write-ahead
        log at a checkpoint, at the latest when the next process closes it), the stamp is
        stale and the open after that checks.
        """
        for name, channel in self.channels.items():
            if name not in keep and name not in self._closed:
                self._closed.add(name)
                channel.close()
        if not keep:
            wrote = self.catalog.wrote
            self.catalog.close()
            if vouch and wrote:
                _remember_checked(self.catalog.path)


def _recorded_vault(stored: str | None) -> dict[str, str] | None:
    """The vault an index recorded as its own (None: none yet, or a record that does not read)."""
    if stored is None:
        return None
    try:
        data = load_index_json(stored)
    except ValueError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("path"), str) or not isinstance(data.get("relative"), str):
        return None
    return {"path": data["path"], "relative": data["relative"]}


def _same_vault(owner: dict[str, str], vault: Path, index_dir: Path) -> bool:
    """Whether the recorded owner is `vault`: the same folder, the same place beside the
    index (both moved or copied together), or a recorded folder that is gone (moved)."""
    recorded = Path(owner["path"])
    if recorded == vault or (index_dir / owner["relative"]).resolve() == vault:
        return True
    try:
        return recorded.samefile(vault)
    except OSError:
        return not recorded.exists()


def _check_stamp(path: Path) -> Path:
    return path.with_name(f"{path.name}.checked")


def _file_state(path: Path) -> str:
    stat = path.stat()
    return f"{stat.st_size} {stat.st_mtime_ns}"


def _checked_before(path: Path) -> bool:
    """Whether the catalog file is byte for byte as it was when it last passed the integrity
    check (same size and modification time): the check reads the whole file, a third of a
    second at 10k notes, at every open."""
    try:
        return _check_stamp(path).read_text(encoding="utf-8") == _file_state(path)
    except (OSError, UnicodeDecodeError):
        return False


def _remember_checked(path: Path) -> None:
    """Note the state of a catalog that passed the check (a reader on a read-only disk just checks again)."""
    try:
        state = _file_state(path)
        stamp = _check_stamp(path)
        if not stamp.exists() or stamp.read_text(encoding="utf-8") != state:
            stamp.write_text(state, encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return


# The concrete channel types the façade reaches for their own extras (stems, neighbours …).
__all__ += ["FulltextChannel", "GraphChannel", "VectorChannel"]
