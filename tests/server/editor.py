"""An editor for the tests: pygls's own language client, talking to ``guards server`` over a
pair of pipes as an editor talks over stdio, with what it was sent collected for the tests to
wait on.

``Editor.start`` runs the server this process builds (``guards.server.app.build``) in a thread
at the other ends of the pipes: the same messages, byte for byte, without a process that
imports the server and warms lsprotocol's converters again for each test (1.4 s of CPU a
session). ``Editor.start_process`` starts ``python -m guards server`` as an editor does; the
tests of the command line, its exit codes and its TCP mode use it (tests/server/test_command.py
and the shutdown test)."""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
from pathlib import Path
from typing import BinaryIO

from lsprotocol import types
from pygls.io_ import run_async
from pygls.lsp.client import LanguageClient
from pygls.uris import from_fs_path

from guards.server.app import build

WAIT = 60.0  # seconds a test waits for the server to answer before it fails


def uri(path: Path) -> str:
    return from_fs_path(str(path))


class Client(LanguageClient):
    """pygls's client, keeping the server's exit code."""

    returncode: int | None = None

    async def server_exit(self, server: asyncio.subprocess.Process) -> None:
        self.returncode = server.returncode


class Editor:
    """One client connected to one server; ``published`` holds every diagnostics notification
    by document URI, ``messages`` every message shown, ``registrations`` what the server asked
    the client to watch."""

    def __init__(self) -> None:
        self.client = Client("guards-tests", "1")
        self.published: dict[str, list[types.PublishDiagnosticsParams]] = {}
        self.messages: list[types.ShowMessageParams] = []
        self.logged: list[types.LogMessageParams] = []
        self.registrations: list[types.Registration] = []
        self.versions: dict[str, int] = {}
        self._thread: threading.Thread | None = None
        self._writer: asyncio.StreamWriter
        self._server_input: BinaryIO
        self._arrived = asyncio.Condition()
        self._listen()

    def _listen(self) -> None:
        client = self.client

        @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        async def published(params: types.PublishDiagnosticsParams) -> None:
            params.diagnostics = list(params.diagnostics)  # the decoder gives a tuple
            self.published.setdefault(params.uri, []).append(params)
            await self._notify()

        @client.feature(types.WINDOW_SHOW_MESSAGE)
        async def shown(params: types.ShowMessageParams) -> None:
            self.messages.append(params)
            await self._notify()

        @client.feature(types.WINDOW_LOG_MESSAGE)
        async def logged(params: types.LogMessageParams) -> None:
            self.logged.append(params)

        @client.feature(types.CLIENT_REGISTER_CAPABILITY)
        def register(params: types.RegistrationParams) -> None:
            self.registrations.extend(params.registrations)

    async def _notify(self) -> None:
        async with self._arrived:
            self._arrived.notify_all()

    async def start(self, folder: Path) -> types.InitializeResult:
        """A server of this process, in a thread, on the other ends of two pipes."""
        to_server, from_client = _pipe(buffered_end="read")
        to_client, from_server = _pipe(buffered_end="write")
        server = build()
        self._thread = threading.Thread(
            target=server.start_io, args=(to_server, from_server), daemon=True
        )
        self._server_input = to_server
        self._thread.start()
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader()
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), to_client)
        transport, flow = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, from_client
        )
        self._writer = asyncio.StreamWriter(transport, flow, reader, loop)
        client = self.client
        client.protocol.set_writer(self._writer)
        connection = run_async(
            stop_event=client._stop_event,
            reader=reader,
            protocol=client.protocol,
            logger=logging.getLogger(__name__),
            error_handler=client.report_server_error,
        )
        client._async_tasks.append(asyncio.create_task(connection))
        return await self.initialize(folder)

    async def start_process(self, folder: Path) -> types.InitializeResult:
        """``python -m guards server`` in a subprocess, as an editor starts it."""
        await self.client.start_io(sys.executable, "-m", "guards", "server")
        return await self.initialize(folder)

    async def initialize(self, folder: Path) -> types.InitializeResult:
        capabilities = types.ClientCapabilities(
            workspace=types.WorkspaceClientCapabilities(
                did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(
                    dynamic_registration=True
                ),
                workspace_edit=types.WorkspaceEditClientCapabilities(document_changes=True),
            )
        )
        folders = [types.WorkspaceFolder(uri=uri(folder), name=folder.name)]
        result = await self.client.initialize_async(
            types.InitializeParams(capabilities=capabilities, workspace_folders=folders)
        )
        self.client.initialized(types.InitializedParams())
        return result

    # -- documents ---------------------------------------------------------------------------

    def open(self, path: Path, text: str | None = None) -> str:
        text = path.read_text(encoding="utf-8") if text is None else text
        item = types.TextDocumentItem(uri=uri(path), language_id="yaml", version=1, text=text)
        self.versions[item.uri] = 1
        self.client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=item))
        return item.uri

    def change(self, path: Path, text: str) -> int:
        """The whole buffer replaced by ``text``; its new version."""
        address = uri(path)
        self.versions[address] += 1
        document = types.VersionedTextDocumentIdentifier(
            uri=address, version=self.versions[address]
        )
        change = types.TextDocumentContentChangeWholeDocument(text=text)
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(text_document=document, content_changes=[change])
        )
        return self.versions[address]

    def save(self, path: Path) -> None:
        document = types.TextDocumentIdentifier(uri=uri(path))
        self.client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=document))

    def close(self, path: Path) -> None:
        document = types.TextDocumentIdentifier(uri=uri(path))
        self.client.text_document_did_close(
            types.DidCloseTextDocumentParams(text_document=document)
        )

    def files_changed(self, *paths: Path) -> None:
        changes = [
            types.FileEvent(uri=uri(path), type=types.FileChangeType.Changed) for path in paths
        ]
        self.client.workspace_did_change_watched_files(
            types.DidChangeWatchedFilesParams(changes=changes)
        )

    # -- waiting for the server ----------------------------------------------------------------

    async def diagnostics(self, path: Path, after: int = 0) -> types.PublishDiagnosticsParams:
        """The first diagnostics published for ``path`` after the first ``after`` of them."""
        address = uri(path)
        await self._until(lambda: len(self.published.get(address, [])) > after)
        return self.published[address][after]

    async def message(self, after: int = 0) -> types.ShowMessageParams:
        await self._until(lambda: len(self.messages) > after)
        return self.messages[after]

    async def _until(self, ready) -> None:
        async def wait() -> None:
            async with self._arrived:
                await self._arrived.wait_for(ready)

        await asyncio.wait_for(wait(), WAIT)

    # -- requests ------------------------------------------------------------------------------

    async def code_actions(
        self, path: Path, diagnostics: list[types.Diagnostic]
    ) -> list[types.CodeAction]:
        params = types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri(path)),
            range=diagnostics[0].range,
            context=types.CodeActionContext(diagnostics=diagnostics),
        )
        return list(await self.client.text_document_code_action_async(params) or [])

    async def hover(self, path: Path, line: int, character: int) -> types.Hover | None:
        params = types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri(path)),
            position=types.Position(line=line, character=character),
        )
        return await self.client.text_document_hover_async(params)

    async def stop(self) -> int | None:
        """Shut the server down as an editor does; its exit code (of a process)."""
        if not self.client.stopped:
            await self.client.shutdown_async(None)
            self.client.exit(None)
            await self.client.stop()
        if self._thread is not None:  # its reader waits for the end of its input
            self._writer.close()
            await asyncio.to_thread(self._thread.join, WAIT)
            assert not self._thread.is_alive(), "the server did not stop"
            self._server_input.close()
        return self.client.returncode


def _pipe(buffered_end: str):
    """The two ends of a pipe as binary files (read, write): the server's end buffered as
    stdio is, the client's unbuffered for its event loop."""
    read, write = os.pipe()
    return (
        open(read, "rb", buffering=-1 if buffered_end == "read" else 0),
        open(write, "wb", buffering=-1 if buffered_end == "write" else 0),
    )


def applied(text: str, edits: list[types.TextEdit]) -> str:
    """``text`` with ``edits`` applied as an editor applies them (UTF-16 columns)."""
    lines = text.split("\n")
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)

    def offset(position: types.Position) -> int:
        if position.line >= len(lines):
            return len(text)
        line = lines[position.line].encode("utf-16-le")[: position.character * 2]
        return starts[position.line] + len(line.decode("utf-16-le"))

    spans = sorted((offset(e.range.start), offset(e.range.end), e.new_text) for e in edits)
    for start, end, new in reversed(spans):
        text = text[:start] + new + text[end:]
    return text
