"""``guards server`` on the command line: its address, a missing extra, TCP; and a server that
meets a bug says so and goes on."""

import asyncio
import socket
import subprocess
import sys
import time

import pytest
from lsprotocol import types

from guards.server.app import Session

from ..cli_helpers import run_guards
from .editor import Editor

FAST = "composes/qwen3.8-27b/vllm/dual/fast.yml"


@pytest.mark.parametrize(
    "address", ["localhost", ":4000", "localhost:0", "localhost:65536", "localhost:http"]
)
def test_an_address_that_is_not_host_and_port_is_one_error(capsys, address):
    result = run_guards(capsys, "server", "--tcp", address)
    assert (result.code, result.out) == (2, "")
    assert result.err == (
        f"guards: error: --tcp {address!r}: expected HOST:PORT, a port from 1 to 65535\n"
    )


def test_without_the_server_extra_the_command_says_how_to_install_it(capsys, monkeypatch):
    monkeypatch.delitem(sys.modules, "guards.server.app", raising=False)
    monkeypatch.setitem(sys.modules, "lsprotocol", None)  # as if it were not installed
    result = run_guards(capsys, "server")
    assert (result.code, result.out) == (2, "")
    assert result.err == (
        "guards: error: `guards server` needs lsprotocol: pip install 'compose-guards[server]'\n"
    )


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_an_address_in_use_is_one_error():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "guards", "server", "--tcp", f"127.0.0.1:{port}"],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"guards: error: --tcp 127.0.0.1:{port}: cannot listen: Address already in use\n"
    )


def test_over_tcp_an_editor_gets_the_same_diagnostics(incident):
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "guards", "server", "--tcp", f"127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )

    async def session():
        editor = Editor()
        for _ in range(600):  # until it listens (start-up imports take a moment)
            try:
                await editor.client.start_tcp("127.0.0.1", port)
                break
            except OSError:
                await asyncio.sleep(0.1)
        await editor.initialize(incident)
        editor.open(incident / FAST)
        published = await editor.diagnostics(incident / FAST)
        await editor.client.shutdown_async(None)
        editor.client.exit(None)
        await editor.client.stop()
        return published

    try:
        published = asyncio.run(session())
        assert server.wait(timeout=60) == 0
    finally:
        server.kill()
        server.wait()
        server.stderr.close()
    assert [(d.code, d.range.start.line) for d in published.diagnostics] == [("C001", 28)]


class Shown:
    """A server that only records the messages it is asked to show."""

    def __init__(self) -> None:
        self.shown: list[types.ShowMessageParams] = []

    def window_show_message(self, params: types.ShowMessageParams) -> None:
        self.shown.append(params)


def test_an_unexpected_error_is_shown_with_its_log_and_the_server_goes_on():
    server = Shown()
    session = Session(server)  # type: ignore[arg-type]

    def broken() -> None:
        raise ValueError("a bug")

    async def twice():
        return [await session._in_worker(broken), await session._in_worker(time.monotonic)]

    failed, worked = asyncio.run(twice())
    session.stop()
    assert failed is None and isinstance(worked, float)
    [shown] = server.shown
    assert shown.type == types.MessageType.Error
    prefix = "guards: internal error: ValueError('a bug') (details in "
    assert shown.message.startswith(prefix) and shown.message.endswith(".log)")
    log = shown.message[len(prefix) : -1]
    with open(log, encoding="utf-8") as crash:
        assert crash.read().splitlines()[-1] == "ValueError: a bug"


def test_only_the_command_line_imports_the_server():
    from ..test_layers import edges, modules

    importers = {
        source
        for source, targets in edges(modules()).items()
        if not source.startswith("guards.server")
        and any(t.startswith("guards.server") for t in targets)
    }
    assert importers == {"guards.cli.server"}
