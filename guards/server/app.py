"""The language server: the open documents, the checks they trigger, and what is published.

A document opened is checked at once; a change is checked ``DEBOUNCE`` seconds after the last
one (typing does not start a check per key). A check covers every open document of one estate
and reads each open document's current text, so the latest text wins, and its diagnostics
are published only for the documents still at the version it read. A save, or a file the
client watches changing (``claims.yaml``, the settings, a template, an env file), checks every
open document again. The checks, and the fixes a code action computes, run one at a time in
one worker thread, off the thread that reads the client's messages.

Nothing here writes a file: fixes go back to the editor as edits of its buffer. An error that
stops a check (settings or a registry that cannot be read) is shown once as a message, and as
a diagnostic in that file when it is open; an unexpected error is logged to a file named in the
message, as on the command line, and the server goes on.
"""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, NamedTuple

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path
from pygls.workspace import TextDocument

from .. import __version__
from ..findings import Finding, Fix
from . import convert
from .checking import Checked, check, estate_root, fixes, shown

DEBOUNCE = 0.3  # seconds after the last change before a check starts
WATCHED = ("**/*.toml", "**/*.yaml", "**/*.yml", "**/*.j2", "**/.env", "**/*.env")
log = logging.getLogger(__name__)


class Published(NamedTuple):
    """What was published for one document: the version and text checked, each diagnostic
    with its finding (None for an error), and the check (its estate, for fixes)."""

    version: int | None
    text: str
    entries: list[tuple[types.Diagnostic, Finding | None]]
    checked: Checked


class Session:
    """The server's state: where each open document's estate is, the checks waiting to run,
    and what was last published for each document."""

    def __init__(self, server: LanguageServer) -> None:
        self.server = server
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="guards-check")
        self.roots: dict[str, Path] = {}  # by document URI
        self.waiting: dict[Path, asyncio.TimerHandle] = {}
        self.running: set[asyncio.Future[None]] = set()
        self.published: dict[str, Published] = {}
        self.said: dict[Path, str] = {}  # the error last shown for each estate
        self.stopping = False  # after a shutdown request nothing more is checked

    # -- what triggers a check --------------------------------------------------------------

    def opened(self, uri: str, delay: float) -> None:
        """``uri`` was opened or changed: its estate is checked after ``delay`` seconds."""
        path = _path(uri)
        if path is None or self.stopping:
            return
        root = self._root(uri, path)
        if root is not None:
            self._schedule(root, delay)

    def closed(self, uri: str) -> None:
        self.published.pop(uri, None)
        root = self.roots.pop(uri, None)
        self.server.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=[])
        )
        if root is not None and not self.stopping:  # its buffer no longer stands for the file
            self._schedule(root, DEBOUNCE)

    def everything(self) -> None:
        """A saved or watched file changed: every open document is checked again."""
        for uri in list(self.roots):
            self.opened(uri, DEBOUNCE)

    def _root(self, uri: str, path: Path) -> Path | None:
        from ..errors import GuardsError

        folders = [Path(p) for f in self.server.workspace.folders.values() if (p := _path(f.uri))]
        try:
            self.roots[uri] = estate_root(path, folders)
        except GuardsError as error:  # a pyproject.toml whose [tool.guards] cannot be read
            self._say(path.parent, f"guards: error: {error}")
            return None
        return self.roots[uri]

    def _schedule(self, root: Path, delay: float) -> None:
        waiting = self.waiting.pop(root, None)
        if waiting is not None:
            waiting.cancel()
        loop = asyncio.get_running_loop()
        self.waiting[root] = loop.call_later(delay, self._start, root)

    def _start(self, root: Path) -> None:
        task = asyncio.ensure_future(self.run(root))
        self.running.add(task)  # held until done: the loop keeps only a weak reference
        task.add_done_callback(self.running.discard)

    # -- a check ----------------------------------------------------------------------------

    async def run(self, root: Path) -> None:
        """Check the open documents of ``root`` as they are now; publish what was found."""
        self.waiting.pop(root, None)
        documents = [d for uri, d in self._documents().items() if self.roots.get(uri) == root]
        if not documents:
            return
        versions = {d.uri: (d.version, d.source) for d in documents}
        paths = [Path(d.path) for d in documents]
        checked = await self._in_worker(check, root, paths, self._texts())
        if checked is not None:
            self._publish(checked, documents, versions)

    def _publish(
        self,
        checked: Checked,
        documents: list[TextDocument],
        versions: dict[str, tuple[int | None, str]],
    ) -> None:
        if checked.stopped is not None:
            self._say(checked.root, f"guards: error: {checked.stopped}")
        else:
            self.said.pop(checked.root, None)
        for document in documents:
            version, text = versions[document.uri]
            if document.version != version:
                continue  # changed since: the check that follows publishes it
            entries = self._entries(checked, document, text)
            self.published[document.uri] = Published(version, text, entries, checked)
            self.server.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(
                    uri=document.uri, version=version, diagnostics=[d for d, _ in entries]
                )
            )
        self._log_elsewhere(checked, documents)

    def _log_elsewhere(self, checked: Checked, documents: list[TextDocument]) -> None:
        """Errors in files that are not open (an overlay, an env file) go to the log."""
        placed = {shown(checked.root, Path(d.path)) for d in documents}
        for error in checked.run.errors if checked.run else ():
            if error.path not in placed:
                self.server.window_log_message(
                    types.LogMessageParams(
                        type=types.MessageType.Warning, message=f"guards: error: {error}"
                    )
                )

    def _entries(
        self, checked: Checked, document: TextDocument, text: str
    ) -> list[tuple[types.Diagnostic, Finding | None]]:
        from ..sources.edit import unify_breaks

        lines = unify_breaks(text).split("\n")
        codec = self.server.workspace.position_codec
        name = shown(checked.root, Path(document.path))
        url = checked.run.rules_url if checked.run else None
        entries: list[tuple[types.Diagnostic, Finding | None]] = [
            (convert.error_diagnostic(error, lines, codec), None)
            for error in checked.errors_in(name)
        ]
        entries += [
            (convert.diagnostic(finding, lines, codec, url), finding)
            for finding in checked.findings_in(name)
        ]
        return entries

    def _say(self, root: Path, message: str) -> None:
        """Show ``message`` unless it is what was last shown for this estate."""
        if self.said.get(root) == message:
            return
        self.said[root] = message
        self.server.window_show_message(
            types.ShowMessageParams(type=types.MessageType.Error, message=message)
        )

    async def _in_worker(self, work: Any, *args: Any) -> Any:
        """``work(*args)`` in the worker thread; an unexpected error is logged and shown
        (None is returned), never raised into the server."""
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self.worker, work, *args)
        except Exception:
            self._crashed()
            return None

    def _crashed(self) -> None:
        import sys
        import tempfile
        import traceback

        with tempfile.NamedTemporaryFile(
            "w", prefix="guards-crash-", suffix=".log", delete=False
        ) as crash:
            traceback.print_exc(file=crash)
        self.server.window_show_message(
            types.ShowMessageParams(
                type=types.MessageType.Error,
                message=f"guards: internal error: {sys.exc_info()[1]!r} (details in {crash.name})",
            )
        )

    def _documents(self) -> dict[str, TextDocument]:
        """The open documents that are files, by the URI the client gave (the workspace keys
        them by its unquoted form)."""
        return {d.uri: d for d in self.server.workspace.text_documents.values() if d.path}

    def _texts(self) -> dict[str, str]:
        """Every open document's text, by absolute path."""
        import os

        return {os.path.abspath(d.path): d.source for d in self._documents().values()}

    # -- what the editor asks ---------------------------------------------------------------

    async def code_actions(self, params: types.CodeActionParams) -> list[types.CodeAction]:
        """A quick fix for each fixable finding the request names, in the document as it was
        checked (a document changed since gets none until its next diagnostics)."""
        published = self.published.get(params.text_document.uri)
        document = self._documents().get(params.text_document.uri)
        if published is None or document is None or document.version != published.version:
            return []
        wanted = [
            (diagnostic, finding)
            for diagnostic, finding in published.entries
            if finding is not None
            and finding.fixable
            and any(_same(diagnostic, asked) for asked in params.context.diagnostics)
        ]
        if not wanted or published.checked.estate is None:
            return []
        findings = [finding for _, finding in wanted]
        found = await self._in_worker(fixes, published.checked, findings, self._texts())
        return [
            self._action(document, published, diagnostic, fix)
            for (diagnostic, _), fix in zip(wanted, found or [], strict=False)
            if fix is not None
        ]

    def _action(
        self,
        document: TextDocument,
        published: Published,
        diagnostic: types.Diagnostic,
        fix: Fix,
    ) -> types.CodeAction:
        from ..sources.edit import Source, unify_breaks

        newline = Source(Path(document.path), "", published.text, "", False).newline
        lines = unify_breaks(published.text).split("\n")
        codec = self.server.workspace.position_codec
        edits = convert.text_edits(fix.replacements, lines, newline, codec)
        change = types.TextDocumentEdit(
            text_document=types.OptionalVersionedTextDocumentIdentifier(
                uri=document.uri, version=published.version
            ),
            edits=list(edits),
        )
        return types.CodeAction(
            title=fix.message[:1].upper() + fix.message[1:],
            kind=types.CodeActionKind.QuickFix,
            diagnostics=[diagnostic],
            edit=types.WorkspaceEdit(document_changes=[change]),
        )

    def hover(self, params: types.HoverParams) -> types.Hover | None:
        """The explanation of each rule whose finding covers the position (``guards explain``)."""
        published = self.published.get(params.text_document.uri)
        if published is None:
            return None
        at = (params.position.line, params.position.character)
        hit = [
            (diagnostic, finding)
            for diagnostic, finding in published.entries
            if finding is not None and _start(diagnostic) <= at <= _end(diagnostic)
        ]
        if not hit:
            return None
        return types.Hover(
            contents=types.MarkupContent(
                kind=types.MarkupKind.PlainText,
                value="\n".join(dict.fromkeys(_explanation(f.rule) for _, f in hit if f)),
            ),
            range=hit[0][0].range,
        )

    def stop(self) -> None:
        self.stopping = True
        for waiting in self.waiting.values():
            waiting.cancel()
        self.waiting.clear()
        self.worker.shutdown(wait=True, cancel_futures=True)


def _path(uri: str) -> Path | None:
    """The file a ``file:`` URI names (None for an unsaved buffer or another scheme)."""
    if not uri.startswith("file:"):
        return None
    path = to_fs_path(uri)
    return Path(path) if path else None


def _start(diagnostic: types.Diagnostic) -> tuple[int, int]:
    return (diagnostic.range.start.line, diagnostic.range.start.character)


def _end(diagnostic: types.Diagnostic) -> tuple[int, int]:
    return (diagnostic.range.end.line, diagnostic.range.end.character)


def _same(ours: types.Diagnostic, asked: types.Diagnostic) -> bool:
    """Whether the client's diagnostic is ours: by the fingerprint it carries back, else by
    code, range and message (a client that drops ``data``)."""
    if isinstance(asked.data, dict) and isinstance(ours.data, dict) and "fingerprint" in asked.data:
        return bool(asked.data["fingerprint"] == ours.data["fingerprint"])
    return (asked.code, asked.range, asked.message) == (ours.code, ours.range, ours.message)


def _explanation(rule_id: str) -> str:
    from ..rules import all_rules, find
    from ..rules.docs import explain

    rule = find(all_rules(), rule_id)
    return explain(rule) if rule is not None else rule_id


def build() -> LanguageServer:
    """The server, its features registered (the capabilities it announces follow from them)."""
    server = LanguageServer("guards", __version__)
    session = Session(server)

    @server.feature(types.INITIALIZED)
    def initialized(params: types.InitializedParams) -> None:
        _watch(server)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(params: types.DidOpenTextDocumentParams) -> None:
        session.opened(params.text_document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(params: types.DidChangeTextDocumentParams) -> None:
        session.opened(params.text_document.uri, DEBOUNCE)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(params: types.DidSaveTextDocumentParams) -> None:
        session.everything()

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(params: types.DidCloseTextDocumentParams) -> None:
        session.closed(params.text_document.uri)

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def watched(params: types.DidChangeWatchedFilesParams) -> None:
        session.everything()

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]),
    )
    async def code_action(params: types.CodeActionParams) -> list[types.CodeAction]:
        return await session.code_actions(params)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(params: types.HoverParams) -> types.Hover | None:
        return session.hover(params)

    @server.feature(types.SHUTDOWN)
    def shutdown(params: None) -> None:
        session.stop()

    return server


def _watch(server: LanguageServer) -> None:
    """Ask the client to report changes to the files every check reads (the registry, the
    settings, templates, env files), when it can be asked."""
    workspace = server.client_capabilities.workspace
    watching = workspace.did_change_watched_files if workspace else None
    if not (watching and watching.dynamic_registration):
        return
    options = types.DidChangeWatchedFilesRegistrationOptions(
        watchers=[types.FileSystemWatcher(glob_pattern=pattern) for pattern in WATCHED]
    )
    registration = types.Registration(
        id="guards-watched-files",
        method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
        register_options=options,
    )
    server.client_register_capability(types.RegistrationParams(registrations=[registration]))


def serve(address: tuple[str, int] | None = None) -> None:
    """Serve one client on stdio, or on TCP at ``address`` (host, port)."""
    server = build()
    if address is None:
        server.start_io()
    else:
        server.start_tcp(*address)
