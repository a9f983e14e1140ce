"""JUnit XML: one testcase per check (one rule on one file), passes included, so a CI test
view shows the same totals as ``guard suite: N pass / M fail``. A failing check carries one
``<failure>`` with its findings, and a check the rule could not decide is ``<skipped>`` with
why; inputs that could not be read go to the suite's ``<system-err>``."""

from __future__ import annotations

from xml.etree import ElementTree as ET

from ..errors import MAX_PATH, printable
from ..findings import CheckResult, Run
from ..rules import all_rules
from . import Reporter
from .text import TextReporter

MAX_WHY = 2000  # characters of why a check was not judged (it may quote input)


class JunitReporter(Reporter):
    def render(self, run: Run) -> str:
        summary = run.summary
        counts = {
            "name": "guards",
            "tests": str(summary.passed + summary.failed + summary.not_judged),
            "failures": str(summary.failed),
            "errors": "0",
            **({"skipped": str(summary.not_judged)} if summary.not_judged else {}),
        }
        suites = ET.Element("testsuites", counts)
        suite = ET.SubElement(suites, "testsuite", counts)
        names = {rule.id: rule.name for rule in all_rules()}
        for result in sorted(run.results, key=lambda r: (r.rule, r.target)):
            _testcase(suite, result, names.get(result.rule, ""))
        if run.errors:
            ET.SubElement(suite, "system-err").text = "".join(
                f"guards: error: {error}\n" for error in run.errors
            )
        ET.indent(suites)
        return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suites, "unicode") + "\n"


def _testcase(suite: ET.Element, result: CheckResult, name: str) -> None:
    case = ET.SubElement(
        suite,
        "testcase",
        classname=f"{result.rule} {name}".strip(),
        name=printable(result.target, MAX_PATH),  # XML cannot hold control characters
    )
    lines = "".join(TextReporter(verbose=True).finding(f) for f in result.findings)
    if result.failed:
        first = result.findings[0]
        failure = ET.SubElement(case, "failure", message=first.message, type=result.rule)
        failure.text = lines
        return
    if not result.judged:  # neither passed nor failed: skipped, and why
        why = printable("not judged: " + "; ".join(result.not_judged), MAX_WHY)
        ET.SubElement(case, "skipped", message=why)
    if lines:  # warnings only
        ET.SubElement(case, "system-out").text = lines
