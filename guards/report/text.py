"""Text output: one line per finding (``path:line:col: RULE message``), then the suite total."""

from __future__ import annotations

from ..errors import MAX_PATH, printable
from ..findings import Finding, Run, Severity, Summary, Waiver
from . import Reporter


class TextReporter(Reporter):
    """``path:line:col: RULE message`` (a form terminals and editors make clickable), the hint
    under it with ``--verbose``, and the summary; in colour when ``color`` is set."""

    def finding(self, finding: Finding) -> str:
        paint = self.paint
        if finding.waiver is not None:
            level, tone = f"[{WAIVED[finding.waiver.kind]}] ", DIM
        elif finding.severity is Severity.ERROR:
            level, tone = "", RED
        else:
            level, tone = f"[{finding.severity}] ", YELLOW
        where = paint(printable(finding.path, MAX_PATH), BOLD) + paint(
            f":{finding.line}:{finding.column}:", DIM
        )
        if finding.env is not None:
            level += f"[from {printable(finding.env, MAX_PATH)}] "
        level = FIXABLE + level if finding.fix is not None and finding.waiver is None else level
        line = f"{where} {paint(finding.rule, tone, BOLD)} {paint(level, tone)}{finding.message}\n"
        if finding.waiver is not None:
            line += paint(f"    {waiver_text(finding.waiver)}", DIM) + "\n"
        if self.verbose and finding.hint:
            line += f"    {paint('hint:', CYAN)} {finding.hint}\n"
        return line

    def finish(self, run: Run) -> str:
        summary = run.summary
        tone = RED if summary.failed or (run.strict_baseline and run.stale) else GREEN
        return stale_lines(run) + self.paint(summary_line(summary), tone, BOLD) + "\n"

    def paint(self, text: str, *styles: str) -> str:
        return f"\x1b[{';'.join(styles)}m{text}\x1b[0m" if self.color and text else text


BOLD, DIM, RED, GREEN, YELLOW, CYAN = "1", "2", "31", "32", "33", "36"
FIXABLE = "[*] "  # after the rule id of a finding `guards check --fix` repairs, as ruff marks it
WAIVED = {"inline": "suppressed", "config": "suppressed", "baseline": "baselined"}


def waiver_text(waiver: Waiver) -> str:
    if waiver.kind == "baseline":
        return f"in the baseline {printable(waiver.where, MAX_PATH)}"
    return f"suppressed at {printable(waiver.where, MAX_PATH)}: {waiver.reason}"


def summary_line(summary: Summary) -> str:
    """``guard suite: N pass / M fail``, then the not judged, warnings, suppressed,
    baselined and fixable counts that are not zero."""
    tail = f", {summary.not_judged} not judged" if summary.not_judged else ""
    if summary.warnings:
        tail += f", {summary.warnings} warning{'s' if summary.warnings != 1 else ''}"
    if summary.suppressed:
        tail += f", {summary.suppressed} suppressed"
    if summary.baselined:
        tail += f", {summary.baselined} baselined"
    if summary.fixable:
        tail += f", {summary.fixable} fixable with --fix"
    return f"guard suite: {summary.passed} pass / {summary.failed} fail{tail}"


def stale_lines(run: Run) -> str:
    """The baseline entries that no longer match a finding, so the baseline can shrink."""
    if not run.stale:
        return ""
    count = f"{len(run.stale)} entr{'y' if len(run.stale) == 1 else 'ies'}"
    strict = ", failing the run (--strict-baseline)" if run.strict_baseline else ""
    head = (
        f"{printable(run.baseline or 'baseline', MAX_PATH)}: {count} no longer match a finding"
        f"{strict}; rewrite it with `guards baseline`\n"
    )
    return head + "".join(
        f"  {printable(e.path, MAX_PATH)}:{e.line}: {e.rule} {printable(e.message, 200)}\n"
        for e in run.stale
    )


class StatisticsReporter(TextReporter):
    """``--statistics``: how many findings each rule has, most first, then the suite total.
    When a fix exists for some finding, a column says which rules have fixable findings
    (``[*]``, as ruff marks them; the total says how many)."""

    def render(self, run: Run) -> str:
        from collections import Counter

        from ..rules import all_rules

        names = {rule.id: rule.name for rule in all_rules()}
        counts = Counter(f.rule for f in run.findings)
        fixable = {f.rule for f in run.findings if f.fix is not None}
        rows = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
        width = len(str(rows[0][1])) if rows else 1

        def mark(rule: str) -> str:
            return ("[*] " if rule in fixable else "[ ] ") if fixable else ""

        table = "".join(
            f"{n:>{width}}  {rule}  {mark(rule)}{names.get(rule, '')}\n" for rule, n in rows
        )
        return table + self.finish(run)
