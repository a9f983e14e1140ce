"""The editor server's latency: the time from a ``didChange`` to the ``publishDiagnostics`` that
answers it.

    .venv/bin/python bench/server.py [--repeat N] [--workdir DIR]

``guards server`` runs as an editor runs it (a subprocess over stdio), driven by pygls's own
client. One compose of the estate is opened; each round replaces its buffer with a new text
(a comment line whose number changes, so every check reads a text it has not seen) and waits
for the diagnostics of that version. The estates: the club-3090 sample
(``../shared/corpus/club-3090-sample``, its largest compose open) when it is present, and a
generated estate of 100 composes (``bench/estates.py``'s generator, cached under
``--workdir``; its first compose open). Each row gives the median of ``--repeat`` rounds, the
fastest and the slowest, and the median less the server's debounce (the wait after the last
change before a check starts, ``guards.server.app.DEBOUNCE``): what the check and the
protocol cost. Beside it, the check alone in this process (``guards.server.checking.check``
on the same buffer, its median over as many runs after one to warm up).

The guards package is compiled to bytecode first, so no run pays for compiling it.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient
from pygls.uris import from_fs_path

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT.parent / "shared" / "corpus" / "club-3090-sample"
WAIT = 120.0  # seconds a round may take before the benchmark gives up


class Editor:
    """The client, with each published version's arrival time."""

    def __init__(self) -> None:
        self.client = LanguageClient("guards-bench", "1")
        self.arrived: dict[int, float] = {}
        self.event = asyncio.Event()

        @self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def published(params: types.PublishDiagnosticsParams) -> None:
            if params.version is not None:
                self.arrived[params.version] = time.perf_counter()
                self.event.set()

    async def until(self, version: int) -> float:
        while version not in self.arrived:
            self.event.clear()
            await asyncio.wait_for(self.event.wait(), WAIT)
        return self.arrived[version]


async def latencies(estate: Path, compose: Path, repeat: int) -> list[float]:
    editor = Editor()
    client = editor.client
    await client.start_io(sys.executable, "-m", "guards", "server")
    folder = types.WorkspaceFolder(uri=from_fs_path(str(estate)), name=estate.name)
    await client.initialize_async(
        types.InitializeParams(capabilities=types.ClientCapabilities(), workspace_folders=[folder])
    )
    client.initialized(types.InitializedParams())
    uri = from_fs_path(str(compose))
    text = compose.read_text(encoding="utf-8")
    item = types.TextDocumentItem(uri=uri, language_id="yaml", version=1, text=text)
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=item))
    await editor.until(1)
    times = []
    for version in range(2, repeat + 2):
        change = types.TextDocumentContentChangeWholeDocument(text=edited(text, version))
        document = types.VersionedTextDocumentIdentifier(uri=uri, version=version)
        sent = time.perf_counter()
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(text_document=document, content_changes=[change])
        )
        times.append(await editor.until(version) - sent)
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return times


def edited(text: str, version: int) -> str:
    return f"{text.rstrip()}\n# edit {version}\n"


def check_alone(estate: Path, compose: Path, repeat: int) -> list[float]:
    from guards.server.checking import check

    times = []
    for version in range(repeat + 1):
        texts = {str(compose): edited(compose.read_text(encoding="utf-8"), version)}
        start = time.perf_counter()
        check(estate, [compose], texts)
        times.append(time.perf_counter() - start)
    return times[1:]


def largest_compose(estate: Path) -> Path:
    composes = [p for p in estate.rglob("*.yml") if "services:" in p.read_text(encoding="utf-8")]
    return max(composes, key=lambda p: (len(p.read_text(encoding="utf-8")), str(p)))


def generated(workdir: Path) -> tuple[Path, Path]:
    spec = importlib.util.spec_from_file_location("bench_estates", ROOT / "bench" / "estates.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    estate, _ = module.cached_estate(workdir, 100)
    return estate, estate / module.one_compose(estate)


def row(label: str, times: list[float], debounce: float | None) -> str:
    median = statistics.median(times)
    less = f"{(median - debounce) * 1000:7.0f}" if debounce is not None else "      -"
    return (
        f"{label:<56} {median * 1000:7.0f} {min(times) * 1000:7.0f} {max(times) * 1000:7.0f} {less}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument(
        "--workdir", type=Path, default=Path(tempfile.gettempdir()) / "guards-bench"
    )
    args = parser.parse_args()
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "guards")], check=True)
    from guards.server.app import DEBOUNCE

    estates = []
    if SAMPLE.is_dir():
        estates.append(("club-3090 sample", SAMPLE, largest_compose(SAMPLE)))
    else:
        print(f"# {SAMPLE} is not here: the sample's rows are left out", file=sys.stderr)
    estates.append(("generated, 100 composes", *generated(args.workdir)))
    print(f"# ms, {args.repeat} rounds; debounce {DEBOUNCE * 1000:.0f} ms")
    print(f"{'':<56} {'median':>7} {'min':>7} {'max':>7} {'-debounce':>9}")
    for label, estate, compose in estates:
        print(f"# {label}: {compose.relative_to(estate)}", file=sys.stderr)
        times = asyncio.run(latencies(estate, compose, args.repeat))
        print(row(f"{label}: didChange -> publishDiagnostics", times, DEBOUNCE))
        print(row(f"{label}: the check alone", check_alone(estate, compose, args.repeat), None))


if __name__ == "__main__":
    main()
