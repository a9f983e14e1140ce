"""The one edit module: spans applied from the end, line endings, BOM, mode, atomic writes."""

import os
import stat
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from guards.errors import GuardsError
from guards.sources import edit
from guards.sources.edit import Edit, apply, line_edits


def source(tmp_path, data: bytes, name="f.yaml"):
    path = tmp_path / name
    path.write_bytes(data)
    return edit.read(path, name)


def test_edits_apply_from_the_end_and_keep_insert_order():
    text = "a: 1\nb: 2\n"
    edits = [Edit(5, 5, "x: 0\n"), Edit(3, 4, "9"), Edit(5, 5, "y: 0\n")]
    assert edit.apply(text, edits) == "a: 9\nx: 0\ny: 0\nb: 2\n"


def test_overlapping_edits_are_refused():
    with pytest.raises(ValueError, match="overlapping edits at offsets 0 and 2"):
        edit.apply("abcdef", [Edit(0, 3, "x"), Edit(2, 4, "y")])


def test_each_line_keeps_its_own_ending(tmp_path):
    src = source(tmp_path, b"a: 1\r\nb: 2\nc: 3\r\n")
    assert src.text == "a: 1\nb: 2\nc: 3\n"
    start = src.text.index("3")
    rendered = src.render([Edit(start, start + 1, "4"), Edit(0, 0, "z: 0\n")])
    # CRLF is the dominant ending (2 of 3 lines), so the inserted line takes it.
    assert rendered == "z: 0\r\na: 1\r\nb: 2\nc: 4\r\n"


def test_bom_and_mode_survive_and_unchanged_text_is_not_written(tmp_path):
    src = source(tmp_path, "\ufeffk: v\n".encode())
    os.chmod(src.path, 0o640)
    assert src.bom and src.text == "k: v\n"
    assert edit.write(src, src.raw) is False
    before = src.path.stat().st_mtime_ns
    assert edit.write(src, src.render([Edit(3, 4, "w")])) is True
    assert src.path.read_bytes() == "\ufeffk: w\n".encode()
    assert stat.S_IMODE(src.path.stat().st_mode) == 0o640
    assert src.path.stat().st_mtime_ns >= before
    assert [p.name for p in tmp_path.iterdir()] == ["f.yaml"]  # no temp file left


def test_a_symlink_is_written_through_to_its_target(tmp_path):
    target = tmp_path / "real.yaml"
    target.write_text("k: v\n", encoding="utf-8")
    (tmp_path / "link.yaml").symlink_to(target)
    src = edit.read(tmp_path / "link.yaml", "link.yaml")
    edit.write(src, "k: w\n")
    assert (tmp_path / "link.yaml").is_symlink()
    assert target.read_text(encoding="utf-8") == "k: w\n"


def test_a_read_only_file_is_refused(tmp_path):
    src = source(tmp_path, b"k: v\n")
    os.chmod(src.path, 0o444)
    with pytest.raises(GuardsError) as caught:
        edit.write(src, "k: w\n")
    assert str(caught.value) == "f.yaml: file is read-only; nothing written"
    assert src.path.read_bytes() == b"k: v\n"


def test_not_utf8_names_line_and_column(tmp_path):
    with pytest.raises(GuardsError) as caught:
        source(tmp_path, b"a: 1\nb: \xe9\n")
    assert str(caught.value) == "f.yaml:2:4: not valid UTF-8 (byte 0xe9)"


_LINES = st.lists(st.sampled_from(["a", "b", "", "#", "c d", "a"]), max_size=10)


@given(_LINES, _LINES, st.booleans(), st.booleans())
def test_line_edits_turn_one_text_into_the_other(old, new, old_ends, new_ends):
    before = "\n".join(old) + ("\n" if old_ends and old else "")
    after = "\n".join(new) + ("\n" if new_ends and new else "")
    assert apply(before, line_edits(before, after)) == after


def test_line_edits_of_a_local_change_take_time_linear_in_the_file():
    """A file of identical lines (bare `#` comments) with one line changed: the lines both
    texts share at their ends are set aside, so no quadratic diff runs over them."""

    def seconds(count: int) -> float:
        before = "#\n" * count + "x: 1\n" + "#\n" * count
        after = before.replace("x: 1", "x: 2")
        start = time.process_time()
        assert apply(before, line_edits(before, after)) == after
        return time.process_time() - start

    seconds(1000)
    small, large = seconds(5_000), seconds(20_000)
    assert large < max(8 * small, 0.05), (small, large)
