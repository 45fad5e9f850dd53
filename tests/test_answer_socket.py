"""Answers at once: a process holding the index answers `engine search`/`context`/`status` over
a socket in the index folder that only its owner may use; a stale or foreign socket is ignored."""

from __future__ import annotations

import json
import os
import socket
import stat
import struct
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.answers import Ask, answer_request
from engine.api import Engine
from engine.serve import AnswerServer, SocketRefused, ask, check_socket, socket_path

QUERY = "who attended the Atlas kickoff"


@pytest.fixture(scope="module")
def lexical(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    """sample_vault without the model (exact and quick); tests must not modify it."""
    from vault_copy import copy_sample_vault

    base = tmp_path_factory.mktemp("answers")
    engine = Engine.open(copy_sample_vault(base / "vault"), index_dir=base / "index", embedder=None)
    engine.reindex()
    yield engine
    engine.close()


@pytest.fixture
def server(lexical: Engine) -> Iterator[AnswerServer]:
    """The lexical engine answering on its index folder's socket."""
    answers = AnswerServer(lexical.index_dir, lambda question: answer_request(lexical, question))
    assert answers.start()
    yield answers
    answers.close()


def _engine(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The `engine` command in a process of its own, as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "engine", *args], capture_output=True, text=True, timeout=120, env=env, check=False
    )


def _search_args(engine: Engine, *more: str) -> list[str]:
    return ["search", str(engine.vault), "--index-dir", str(engine.index_dir), "--no-model", "--limit", "4", *more, QUERY]


def test_the_socket_is_its_owner_s_alone(lexical: Engine, server: AnswerServer) -> None:
    info = socket_path(lexical.index_dir).lstat()
    assert stat.S_ISSOCK(info.st_mode)
    assert info.st_uid == os.getuid() and stat.S_IMODE(info.st_mode) == 0o600
    # Nothing else was left beside it (the private folder it was made in is gone).
    assert not [p for p in lexical.index_dir.iterdir() if p.name.startswith(".answers-")]


def test_a_running_engine_answers_the_command_as_the_command_would(lexical: Engine, server: AnswerServer) -> None:
    for extra in ((), ("--explain",), ("--json",), ("--vimgrep",), ("--why", "Leo Fischer")):
        before = server.answered
        asked = _engine(*_search_args(lexical, *extra))
        assert server.answered == before + 1, f"the socket was not asked for {extra}"
        cold = _engine(*_search_args(lexical, "--cold", *extra))
        assert server.answered == before + 1, "--cold must not ask"
        assert asked.returncode == cold.returncode == 0
        if "--json" in extra:  # the timings differ, nothing else
            fast, slow = json.loads(asked.stdout), json.loads(cold.stdout)
            assert [h["path"] for h in fast["hits"]] == [h["path"] for h in slow["hits"]]
            assert [h["plain"] for h in fast["hits"]] == [h["plain"] for h in slow["hits"]]
        else:
            assert asked.stdout == cold.stdout and asked.stdout
    status = _engine("status", str(lexical.vault), "--index-dir", str(lexical.index_dir), "--no-model", "--json")
    assert status.returncode == 0 and json.loads(status.stdout)["notes"] == lexical.status().notes
    missing = _engine(*_search_args(lexical, "--why", "Priya Kumr"))
    assert missing.returncode == 7 and "did you mean:\n  Priya Kumar" in missing.stderr


def test_a_stale_socket_is_ignored_and_replaced(lexical: Engine) -> None:
    path = socket_path(lexical.index_dir)
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(path))  # as a killed process leaves it: a socket file nobody listens on
    dead.close()
    os.chmod(path, 0o600)
    try:
        assert ask(lexical.index_dir, {}).answer is None
        result = _engine(*_search_args(lexical))
        assert result.returncode == 0 and "Priya Kumar" in result.stdout and "note:" not in result.stderr
        answers = AnswerServer(lexical.index_dir, lambda question: answer_request(lexical, question))
        assert answers.start(), "the next server takes the stale socket's place"
        try:
            assert ask(lexical.index_dir, Ask("status", vault=str(lexical.vault), no_model=True).to_json()).answer
        finally:
            answers.close()
        assert not path.exists()
    finally:
        path.unlink(missing_ok=True)


def test_a_second_server_leaves_the_first_one_answering(lexical: Engine, server: AnswerServer) -> None:
    second = AnswerServer(lexical.index_dir, lambda question: {"stdout": "second", "stderr": "", "code": 0})
    assert not second.start()
    second.close()
    assert server.serving and socket_path(lexical.index_dir).exists()


def test_a_socket_open_to_others_is_refused(lexical: Engine, server: AnswerServer) -> None:
    path = socket_path(lexical.index_dir)
    os.chmod(path, 0o666)
    try:
        with pytest.raises(SocketRefused, match="open to other users"):
            check_socket(path)
        before = server.answered
        refused = ask(lexical.index_dir, Ask("status", vault=str(lexical.vault)).to_json())
        assert refused.answer is None and refused.refused and "mode 666" in refused.note
        result = _engine(*_search_args(lexical))
        assert result.returncode == 0 and "Priya Kumar" in result.stdout  # answered alone
        assert "ignored" in result.stderr and "open to other users" in result.stderr
        assert server.answered == before
    finally:
        os.chmod(path, 0o600)


def test_a_socket_of_another_user_is_refused(lexical: Engine, server: AnswerServer) -> None:
    path = socket_path(lexical.index_dir)
    with pytest.raises(SocketRefused, match="belongs to another user"):
        check_socket(path, uid=os.getuid() + 1)
    if os.getuid() != 0:
        return  # only root can give the socket away to see the command refuse it
    os.chown(path, 65534, -1)
    try:
        refused = ask(lexical.index_dir, Ask("status", vault=str(lexical.vault)).to_json())
        assert refused.answer is None and refused.refused and "another user (uid 65534)" in refused.note
    finally:
        os.chown(path, 0, -1)


def test_a_file_that_is_not_a_socket_is_refused(tmp_path: Path) -> None:
    socket_path(tmp_path).write_text("not a socket")
    with pytest.raises(SocketRefused, match="not a socket"):
        check_socket(socket_path(tmp_path))
    assert ask(tmp_path, {}).answer is None


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to run a client as another user")
def test_the_server_hangs_up_on_another_user() -> None:
    # A folder another user can reach, a socket opened to everyone by mistake: the server
    # still answers nobody but its own user (the peer's uid, SO_PEERCRED).
    folder = Path(tempfile.mkdtemp(prefix="cairn-peer-", dir="/tmp"))
    folder.chmod(0o711)
    answers = AnswerServer(folder, lambda question: {"stdout": "secret", "stderr": "", "code": 0})
    try:
        assert answers.start()
        socket_path(folder).chmod(0o666)
        client = (
            "import socket,struct,sys\n"
            "s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])\n"
            "try:\n"
            "    q=b'{}'; s.sendall(struct.pack('>I',len(q))+q); print(repr(s.recv(100)))\n"
            "except OSError as e:\n"
            "    print('closed', e.errno)\n"
        )
        other = subprocess.run(
            ["/usr/bin/python3", "-I", "-c", client, str(socket_path(folder))],
            capture_output=True, text=True, timeout=30, user=65534, check=False, cwd="/",
        )
        assert other.returncode == 0, other.stderr
        assert other.stdout.strip() == "b''" or other.stdout.startswith("closed"), other.stdout  # hung up
        assert "secret" not in other.stdout and answers.answered == 0
        socket_path(folder).chmod(0o600)
        mine = ask(folder, {})
        assert mine.answer == {"stdout": "secret", "stderr": "", "code": 0}  # its own user is answered
    finally:
        answers.close()
        socket_path(folder).unlink(missing_ok=True)
        folder.rmdir()


def test_questions_it_cannot_answer_as_asked_are_declined(lexical: Engine, server: AnswerServer) -> None:
    vault = str(lexical.vault)
    other_settings = ask(lexical.index_dir, Ask("status", vault=vault, no_model=True, config={"max_file_bytes": 1000}).to_json())
    assert other_settings.answer is None and other_settings.note == "other settings"
    other_vault = ask(lexical.index_dir, Ask("status", vault=vault + "-elsewhere", no_model=True).to_json())
    assert other_vault.answer is None and other_vault.note == "another vault"
    wants_vectors = ask(lexical.index_dir, Ask("search", vault=vault, query="x").to_json())
    assert wants_vectors.answer is None and wants_vectors.note == "no embedding model here"
    wants_model = ask(lexical.index_dir, Ask("status", vault=vault).to_json())
    assert wants_model.answer is None and wants_model.note == "no embedding model here"
    words_only = ask(lexical.index_dir, Ask("search", vault=vault, query="x", channels=("fulltext",)).to_json())
    assert words_only.answer is not None  # vectors not asked for: nothing missing here
    for bad in ({"command": "rm"}, {"command": "status"}, {"command": "status", "vault": vault, "limit": True},
                {"command": "status", "vault": vault, "evil": 1}, [1, 2]):
        declined = ask(lexical.index_dir, bad)  # type: ignore[arg-type]
        assert declined.answer is None and declined.note.startswith("not a question")


def test_an_oversized_question_is_dropped(lexical: Engine, server: AnswerServer) -> None:
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.settimeout(10)
    conn.connect(str(socket_path(lexical.index_dir)))
    conn.sendall(struct.pack(">I", 1 << 30))
    assert conn.recv(10) == b""
    conn.close()
    assert server.serving


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="a long path is reached through /proc/self/fd")
def test_an_index_folder_with_a_long_path_still_answers(tmp_path: Path) -> None:
    deep = tmp_path / ("a-long-folder-name-" * 4) / ("and-another-one-" * 4)
    deep.mkdir(parents=True)
    assert len(str(socket_path(deep))) > 108
    answers = AnswerServer(deep, lambda question: {"stdout": "deep", "stderr": "", "code": 0})
    try:
        assert answers.start()
        assert ask(deep, {}).answer == {"stdout": "deep", "stderr": "", "code": 0}
    finally:
        answers.close()
    assert not socket_path(deep).exists()


def test_an_engine_answers_while_open_and_stops_when_closed(tmp_path: Path) -> None:
    from vault_copy import copy_sample_vault

    vault = copy_sample_vault(tmp_path / "vault")
    engine = Engine.open(vault, index_dir=tmp_path / "index", embedder=None)
    try:
        engine.reindex()
        assert engine.answer_locally()
        assert engine.answer_locally()  # asking again changes nothing
        status = ask(engine.index_dir, Ask("status", vault=str(engine.vault), no_model=True).to_json())
        assert status.answer is not None and "notes:      63" in status.answer["stdout"]
    finally:
        engine.close()
    assert not socket_path(tmp_path / "index").exists()
