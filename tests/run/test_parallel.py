"""Both cores (guards/parallel.py): a run split among worker processes prints what the run in
one process prints, in the same order, errors and remarks included."""

import shutil
import sys
from pathlib import Path

import pytest

from guards.run import parallel
from tests.cli_helpers import run_guards
from tests.conftest import SAMPLES

PROJECT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(PROJECT / "bench"))
import estates as bench  # noqa: E402  (bench/estates.py generates the large estates)

pytestmark = pytest.mark.skipif(
    "fork" not in __import__("multiprocessing").get_all_start_methods(),
    reason="worker processes are forked",
)


def both(capsys, root: Path, *args: str) -> tuple[object, object]:
    """The run in one process and in two, as JSON and with --verbose's remarks."""
    serial = run_guards(capsys, "check", "--root", str(root), "-j", "1", "-v", *args)
    split = run_guards(capsys, "check", "--root", str(root), "-j", "2", "-v", *args)
    return serial, split


@pytest.fixture
def everything_splits(monkeypatch):
    """Split even a small estate, so the bundled one and the samples are run both ways."""
    monkeypatch.setattr(parallel, "MIN_FILES", 0)


@pytest.fixture
def forks(monkeypatch):
    """The worker count of every ``parallel.ordered_map`` call of the test, in order."""
    counts = []
    real = parallel.ordered_map

    def counted(function, items, workers):
        counts.append(workers)
        return real(function, items, workers)

    monkeypatch.setattr(parallel, "ordered_map", counted)
    return counts


def test_the_bundled_estate(capsys, everything_splits):
    serial, split = both(capsys, PROJECT, "--format", "json")
    assert split == serial
    assert '"pass": 413' in serial.out


@pytest.mark.skipif(not SAMPLES.is_dir(), reason="the real samples are not here")
def test_the_real_samples(capsys, tmp_path, everything_splits):
    (tmp_path / "guards.toml").write_text('[header]\npreset = "profile"\n')  # the sample has none
    serial, split = both(capsys, SAMPLES, "--config", str(tmp_path / "guards.toml"))
    assert split == serial
    assert serial.out.endswith("guard suite: 134 pass / 2 fail, 2 not judged\n")


def test_errors_and_findings_keep_their_order(capsys, tmp_path, everything_splits):
    root = tmp_path / "estate"
    shutil.copytree(PROJECT / "composes", root / "composes")
    shutil.copytree(PROJECT / "learnings", root / "learnings")
    shutil.copy(PROJECT / "claims.yaml", root)
    (root / "guards.toml").write_text('[header]\npreset = "profile"\n')
    composes = sorted((root / "composes").rglob("*.yml"))
    composes[3].write_text("services: [\n")  # a parse error in a worker
    text = composes[7].read_text().replace("Status:    ", "Status:    maybe ", 1)
    composes[7].write_text(text)
    serial, split = both(capsys, root)
    assert split == serial
    assert serial.code == 2 and "YAML error" in serial.err and " S002 " in serial.out


def test_an_estate_past_the_break_even_is_split(capsys, tmp_path, monkeypatch, forks):
    """A generated estate past the break-even on an idle machine: split by default (parse and
    the checks; the judges of the suppressions in this process), the same output. The
    break-even is lowered to 32 files here (16 composes and 16 notes: each bundled compose
    once, each note four times); test_small_estates_stay_in_one_process holds the threshold
    itself, and 200 files cost 9 s of CPU time."""
    monkeypatch.setattr(parallel, "MIN_FILES", 32)
    root = tmp_path / "large"
    bench.generate(root, parallel.MIN_FILES // 2)
    monkeypatch.setattr(parallel, "busy", lambda: 0.0)
    split = run_guards(capsys, "check", "--root", str(root), "--format", "json")
    assert forks == [parallel.usable_cores()] * 2 + [1]
    forks.clear()
    serial = run_guards(capsys, "check", "--root", str(root), "--format", "json", "-j", "1")
    assert forks == [1, 1, 1]  # parse, checks, the checks that judge suppressions
    assert split == serial


def test_a_busy_machine_runs_in_one_process(monkeypatch):
    """The default counts the cores actually free: what other processes keep busy taken off
    the usable cores."""
    monkeypatch.setattr(parallel, "usable_cores", lambda: 2)
    for load, workers in ((0.0, 2), (0.4, 2), (0.6, 1), (1.0, 1), (7.5, 1)):
        monkeypatch.setattr(parallel, "busy", lambda load=load: load)
        assert parallel.workers_for(parallel.MIN_FILES, 0) == workers
    assert parallel.workers_for(parallel.MIN_FILES, 2) == 2  # -j 2: as asked
    monkeypatch.setattr(parallel, "usable_cores", lambda: 8)
    monkeypatch.setattr(parallel, "busy", lambda: 3.2)
    assert parallel.workers_for(parallel.MIN_FILES, 0) == 5


def test_busy_is_the_lesser_of_the_load_average_and_the_processes_running_now(monkeypatch):
    """A run that has just ended still weighs on the load average; the processes running now
    say the cores are free again. A load that pauses for a moment is still in the average."""
    monkeypatch.setattr(parallel.os, "getloadavg", lambda: (1.3, 1.0, 0.5))
    monkeypatch.setattr(parallel, "running_now", lambda: 0)
    assert parallel.busy() == 0
    monkeypatch.setattr(parallel, "running_now", lambda: 4)
    assert parallel.busy() == 1.3
    monkeypatch.setattr(parallel, "running_now", lambda: None)  # no /proc/loadavg
    assert parallel.busy() == 1.3

    def no_average():
        raise OSError("no load average")

    monkeypatch.setattr(parallel.os, "getloadavg", no_average)
    assert parallel.busy() == 0.0


def test_the_processes_running_now_leave_this_one_out(tmp_path):
    stat = tmp_path / "loadavg"
    stat.write_text("1.30 1.72 2.76 3/81 8591\n")
    assert parallel.running_now(str(stat)) == 2
    stat.write_text("0.00 0.00 0.00 1/81 8591\n")
    assert parallel.running_now(str(stat)) == 0
    stat.write_text("garbled\n")
    assert parallel.running_now(str(stat)) is None
    assert parallel.running_now(str(tmp_path / "none")) is None


def test_small_estates_stay_in_one_process():
    assert parallel.workers_for(parallel.MIN_FILES - 1, 0) == 1
    assert parallel.workers_for(parallel.MIN_FILES, 3) == 3
    assert parallel.workers_for(parallel.MIN_FILES, 1) == 1


def test_chunks_cover_every_item_once_in_order():
    for count in (2, 7, 8, 9, 100, 301):
        for pieces in (1, 2, 8):
            chunks = parallel._chunks(count, pieces)
            covered = [i for start, end in chunks for i in range(start, end)]
            assert covered == list(range(count))
            assert len(chunks) <= pieces


def test_results_come_back_in_input_order_with_what_workers_read(tmp_path):
    from guards.sources import reads

    files = []
    for index in range(20):
        path = tmp_path / f"f{index}"
        path.write_text(str(index))
        files.append(path)

    def read(path: Path) -> int:
        from guards.sources.edit import read as read_file

        return int(read_file(path, path.name).text) * 2

    with reads.recording() as recorded:
        assert parallel.ordered_map(read, files, 2) == [i * 2 for i in range(20)]
    assert sorted(recorded.states) == sorted(str(p) for p in files) and recorded.complete


def test_a_worker_that_dies_is_an_error_not_a_hang():
    import os
    from concurrent.futures.process import BrokenProcessPool

    parent = os.getpid()

    def die(item: int) -> int:
        if os.getpid() != parent:
            os._exit(9)  # as the kernel's out-of-memory killer would end it
        return item

    with pytest.raises(BrokenProcessPool):
        parallel.ordered_map(die, list(range(40)), 2)


def test_this_process_works_too_and_the_workers_take_the_end():
    """This process takes chunks from the start, unpickled; the workers from the end."""
    import os
    import time

    parent = os.getpid()

    def here(item: int) -> bool:
        if os.getpid() == parent:
            time.sleep(0.02)  # slower than the worker, which must then take a share
            return True
        return False

    where = parallel.ordered_map(here, list(range(64)), 2)
    assert len(where) == 64 and where[0] and not where[-1]
    assert where == sorted(where, reverse=True)  # one run of each: no chunk twice, none lost


def test_an_error_in_this_process_stops_the_workers():
    def fail(item: int) -> int:
        if item == 0:
            raise ValueError("bad item")
        return item

    with pytest.raises(ValueError, match="bad item"):
        parallel.ordered_map(fail, list(range(40)), 2)


STALE = (
    "⚠️ ACCUMULATED-CONTEXT DECODE CLIFF: decode collapses once accumulated context passes\n"
    "~21K on the spec tiers.\n"
)


def test_a_generated_estate_with_cross_file_findings_prints_the_same(
    capsys, tmp_path, monkeypatch, forks
):
    """Past MIN_FILES, with findings that need the whole estate (stale copies of a withdrawn
    claim, found through the estate's vocabulary; a citation of a claim the registry lacks) in
    the files this process checks and in those the worker checks: byte for byte the output of
    one process, remarks included. The break-even is lowered to 40 files (as in
    test_an_estate_past_the_break_even_is_split), the estate has 50."""
    monkeypatch.setattr(parallel, "MIN_FILES", 40)
    root = tmp_path / "large"
    bench.generate(root, 25)
    monkeypatch.setattr(parallel, "busy", lambda: 0.0)
    notes = sorted((root / "learnings").glob("*.md"))
    composes = sorted((root / "models").rglob("*.yml"))
    for note in (notes[0], notes[len(notes) // 2], notes[-1]):
        note.write_text(note.read_text() + f"\n{STALE}\nSee claim:no-such-claim-1.\n")
    for compose in (composes[1], composes[-2]):
        stale = "".join(f"# {line}\n" for line in STALE.splitlines())
        compose.write_text(stale + compose.read_text())
    serial = run_guards(capsys, "check", "--root", str(root), "-v", "-j", "1")
    forks.clear()
    split = run_guards(capsys, "check", "--root", str(root), "-v")
    assert forks[:2] == [parallel.usable_cores()] * 2  # parse and checks were split
    assert split == serial
    assert serial.code == 1 and serial.out.count(" C001 ") == 5 and serial.out.count(" C003 ") == 3
    as_json = run_guards(capsys, "check", "--root", str(root), "--format", "json")
    assert as_json == run_guards(
        capsys, "check", "--root", str(root), "--format", "json", "-j", "1"
    )
