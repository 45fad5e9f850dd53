"""`cairn web`: argument parsing, the printed URL, loopback-only listening, background reindex."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import psutil
import pytest
from starlette.testclient import TestClient
from web_support import BASE_URL, PORT, TOKEN, make_vault

from app.web import build_parser
from engine.api import Engine
from engine.embedder import HashEmbedder
from ui.web.server import build_app

ROOT = Path(__file__).resolve().parents[2]


def test_cairn_web_help_lists_the_options(capsys: pytest.CaptureFixture[str]) -> None:
    from app.main import main

    with pytest.raises(SystemExit) as exited:
        main(["web", "--help"])
    assert exited.value.code == 0
    out = capsys.readouterr().out
    for option in ("--port", "--no-open", "--index-dir"):
        assert option in out


def test_python_m_app_web_parses_its_own_arguments() -> None:
    args = build_parser().parse_args(["some/vault", "--port", "8123", "--no-open", "--index-dir", "/tmp/x"])
    assert (args.vault, args.port, args.no_open, args.index_dir) == (Path("some/vault"), 8123, True, Path("/tmp/x"))
    defaults = build_parser().parse_args([])
    assert defaults.vault is None and defaults.port is None and defaults.no_open is False


def test_cairn_web_prints_a_token_url_and_listens_on_loopback_only(tmp_path: Path) -> None:
    vault = make_vault(tmp_path)
    process = subprocess.Popen(
        [sys.executable, "-m", "app", "web", str(vault), "--no-open", "--no-model", "--index-dir", str(tmp_path / "index")],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "config")},
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        match = re.fullmatch(r"http://127\.0\.0\.1:(\d+)/\?token=([A-Za-z0-9_-]{20,})", url)
        assert match, url
        port, token = int(match.group(1)), match.group(2)
        listening = [
            c.laddr for c in psutil.Process(process.pid).net_connections(kind="inet") if c.status == psutil.CONN_LISTEN
        ]
        assert listening == [("127.0.0.1", port)]
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/api/status", headers={"Authorization": f"Bearer {token}"}
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            status = json.load(response)
        assert status["vault"] == str(vault.resolve())
        assert status["vectors"]["status"] == "unavailable"
    finally:
        process.send_signal(signal.SIGINT)
        _out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    assert "Traceback" not in err


def test_port_zero_picks_a_free_port() -> None:
    from app.web import bind

    first, second = bind(0), bind(0)
    try:
        assert first.getsockname()[1] != second.getsockname()[1]
    finally:
        first.close()
        second.close()


def test_the_app_reindexes_in_the_background_on_start(tmp_path: Path) -> None:
    vault = make_vault(tmp_path)
    with Engine.open(vault, index_dir=tmp_path / "index", embedder=HashEmbedder()) as engine:
        assert engine.status().notes == 0
        app = build_app(engine, TOKEN, port=PORT, reindex=True)
        headers = {"Authorization": f"Bearer {TOKEN}"}
        with TestClient(app, base_url=BASE_URL, headers=headers) as client:
            assert app.state.indexer.wait(timeout=120)
            status = client.get("/api/status").json()
            assert status["notes"] == 64
            assert status["indexing"]["running"] is False
            assert status["indexing"]["error"] == ""
            assert status["vectors"]["status"] == "ok"
            hits = client.get("/api/search", params={"q": "tombstone"}).json()["hits"]
            assert hits[0]["path"] == "Glossary/Tombstone.md"


def test_the_web_view_loads_no_search_library() -> None:
    code = "import sys, ui.web.server, app.web; print(' '.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT).stdout
    loaded = {name.split(".")[0] for name in out.split()}
    assert "starlette" in loaded
    assert not loaded & {"whoosh", "faiss", "igraph", "onnxruntime", "sqlite3", "textual"}


FAKE_BROWSER = r'''
import json, re, sys, urllib.request
from pathlib import Path

record = Path(sys.argv[1])
url = sys.argv[2]
answer = {"argv": sys.argv[2:]}
# A console browser: it reads what it was given and returns only once the page answered.
page = Path(url.removeprefix("file://")).read_text(encoding="utf-8")
target = re.search(r'content="0;url=([^"]+)"', page).group(1).replace("&amp;", "&")
answer["target"] = target
token = target.split("#token=", 1)[1]
base = target.split("#", 1)[0].rstrip("/")
request = urllib.request.Request(base + "/api/status", headers={"Authorization": "Bearer " + token})
with urllib.request.urlopen(request, timeout=20) as response:
    answer["status"] = response.status
answer["mode"] = oct(Path(url.removeprefix("file://")).stat().st_mode & 0o777)
record.write_text(json.dumps(answer), encoding="utf-8")
'''


def test_the_browser_is_given_no_token_and_the_server_answers_while_it_waits(tmp_path: Path) -> None:
    """Process arguments are public (`ps`): the browser gets a private file, and may block until served."""
    vault = make_vault(tmp_path)
    browser = tmp_path / "browser.py"
    browser.write_text(FAKE_BROWSER, encoding="utf-8")
    record = tmp_path / "browser.json"
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "BROWSER": f"{sys.executable} {browser} {record} %s",
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "app", "web", str(vault), "--no-model", "--index-dir", str(tmp_path / "index")],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert process.stdout is not None
        printed = process.stdout.readline().strip()
        token = printed.rsplit("token=", 1)[1]
        deadline = time.monotonic() + 60
        while not record.exists():
            assert process.poll() is None, process.communicate()[1]
            assert time.monotonic() < deadline, "the browser never got an answer"
            time.sleep(0.05)
        answer = json.loads(record.read_text(encoding="utf-8"))
        assert all(token not in argument for argument in answer["argv"])
        assert answer["argv"][0].startswith("file://")
        assert answer["status"] == 200
        assert answer["mode"] == "0o600"
        assert answer["target"].endswith(f"/#token={token}"), "the token travels in the fragment only"
        launch = Path(answer["argv"][0].removeprefix("file://"))
        assert oct(launch.parent.stat().st_mode & 0o777) == "0o700"
    finally:
        process.send_signal(signal.SIGINT)
        _out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    assert not launch.exists(), "the private page goes when the server stops"
