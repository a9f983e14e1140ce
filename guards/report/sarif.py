"""SARIF 2.1.0 output: one run, every rule that ran as a ``reportingDescriptor`` (summary, the
full ``guards explain`` text as help, a ``helpUri`` into the rules reference), and one result
per finding with its region (start and end line and column) and its fingerprint.

Suppressed and baselined findings are included with a ``suppressions`` entry (``inSource`` for
a directive, ``external`` for the config or the baseline) and its justification, as SARIF
expects, so code scanning closes their alerts instead of losing track of them. Inputs that
could not be read are ``toolExecutionNotifications`` and make ``executionSuccessful`` false;
a check a rule could not decide is one too, at level ``note``, naming its rule and file.

The help link is ``rules-url`` from the config when set (where the team publishes the
reference), else ``docs/rules.md`` in the repository the installed package's metadata names
(``[project.urls]``); without one there is no link, never a path into the installation. A
finding a fix exists for carries it as ``fixes`` (its replacements in the file as checked). A
region's ``endColumn`` is given where the rule said where the text ends; else it is left out,
and the region runs to the end of its last line, as SARIF reads a region without one.
"""

from __future__ import annotations

import json
from urllib.parse import quote, urlsplit

from .. import __version__
from ..findings import CheckResult, Finding, Fix, Run, Severity
from ..rules import Rule, all_rules
from . import Reporter

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
SUPPRESSION = {"inline": "inSource", "config": "external", "baseline": "external"}


class SarifReporter(Reporter):
    def render(self, run: Run) -> str:
        rules = [rule for rule in all_rules() if rule.id in run.rules]
        index = {rule.id: i for i, rule in enumerate(rules)}
        base = run.rules_url or reference_url()
        shown = sorted(run.findings + run.waived, key=Finding.sort_key)
        results = [_result(f, index) for f in shown]
        document = {
            "$schema": SCHEMA,
            "version": "2.1.0",
            "runs": [
                {
                    "tool": {
                        "driver": {
                            "name": "guards",
                            "version": __version__,
                            "semanticVersion": __version__,
                            "rules": [_descriptor(rule, base) for rule in rules],
                        }
                    },
                    "invocations": [_invocation(run, index)],
                    "columnKind": "unicodeCodePoints",
                    "results": results,
                }
            ],
        }
        return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


# The labels of [project.urls] that name the project's repository, in the order tried.
REPOSITORY_LABELS = ("repository", "source", "source code", "homepage")


def reference_url() -> str | None:
    """The rules reference in the repository the installed package's metadata names."""
    from importlib import metadata

    try:
        urls = metadata.metadata("compose-guards").get_all("Project-URL") or []
    except metadata.PackageNotFoundError:  # run from a checkout that was never installed
        return None
    return reference_in(urls)


def reference_in(project_urls: list[str]) -> str | None:
    """``docs/rules.md`` in the repository ``project_urls`` name (``Label, URL`` entries, as
    package metadata holds them), on a forge whose file pages are known: GitHub, GitLab."""
    named: dict[str, str] = {}
    for entry in project_urls:
        label, _, url = entry.partition(",")
        named.setdefault(label.strip().lower(), url.strip().rstrip("/"))
    for label in REPOSITORY_LABELS:
        url = named.get(label, "")
        parts = urlsplit(url)
        if parts.scheme != "https" or parts.query or parts.fragment:
            continue
        path = parts.path.removesuffix(".git")
        if parts.hostname == "github.com" and path.count("/") == 2:
            return f"https://github.com{path}/blob/HEAD/docs/rules.md"
        if parts.hostname and parts.hostname.startswith("gitlab.") and path.count("/") >= 2:
            return f"https://{parts.hostname}{path}/-/blob/HEAD/docs/rules.md"
    return None


def _descriptor(rule: Rule, base: str | None) -> dict:
    from ..rules.docs import body, explain

    descriptor = {
        "id": rule.id,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": _why(rule)},
        "help": {"text": explain(rule), "markdown": "\n".join(body(rule))},
        "defaultConfiguration": {"level": LEVELS[rule.severity]},
        "properties": {"tags": [rule.family]},
    }
    if base is not None:
        descriptor["helpUri"] = f"{base}#{rule.id.lower()}-{rule.name}"
    return descriptor


def _why(rule: Rule) -> str:
    doc = rule.doc.strip()
    start = doc.find("Why:")
    end = doc.find("\nBad:")
    return " ".join(doc[start + 4 : end].split()) if 0 <= start < end else rule.summary


def _result(finding: Finding, index: dict[str, int]) -> dict:
    message = finding.message + (f"\nhint: {finding.hint}" if finding.hint else "")
    result: dict = {
        "ruleId": finding.rule,
        "level": LEVELS[finding.severity],
        "message": {"text": message},
        "locations": [_location(finding.path, finding.line, **_span(finding))],
        "partialFingerprints": {"guards/v1": finding.fingerprint},
    }
    if finding.fix is not None and finding.waiver is None:  # a waived finding is not fixed
        result["fixes"] = [_fix(finding.path, finding.fix)]
    if finding.rule in index:
        result["ruleIndex"] = index[finding.rule]
    if finding.waiver is not None:
        result["suppressions"] = [
            {
                "kind": SUPPRESSION[finding.waiver.kind],
                "justification": finding.waiver.reason,
                "location": _location(finding.waiver.path, finding.waiver.line),
            }
        ]
    return result


def _span(finding: Finding) -> dict[str, int]:
    """The region's columns and end line: its end column only where the rule gave one."""
    span = {"startColumn": finding.column, "endLine": finding.end_line}
    if finding.end_known:
        span["endColumn"] = finding.end_column
    return span


def _fix(path: str, fix: Fix) -> dict:
    """A SARIF fix: the file's replacements (each a deleted region and the text put there)."""
    replacements = []
    for r in fix.replacements:
        region = {
            "startLine": r.line,
            "startColumn": r.column,
            "endLine": r.end_line,
            "endColumn": r.end_column,
        }
        inserted = {"insertedContent": {"text": r.text}} if r.text else {}
        replacements.append({"deletedRegion": region, **inserted})
    location = _location(path, None)["physicalLocation"]["artifactLocation"]
    return {
        "description": {"text": fix.message},
        "artifactChanges": [{"artifactLocation": location, "replacements": replacements}],
    }


def _invocation(run: Run, index: dict[str, int]) -> dict:
    notes = [
        {
            "level": "error",
            "message": {"text": error.message},
            **({"locations": [_location(error.path, error.line)]} if error.path else {}),
        }
        for error in run.errors
    ]
    notes += [_not_judged(result, index) for result in run.results if not result.judged]
    invocation: dict = {"executionSuccessful": not run.errors, "exitCode": run.exit_code}
    if notes:
        invocation["toolExecutionNotifications"] = notes
    return invocation


def _not_judged(result: CheckResult, index: dict[str, int]) -> dict:
    """A check the rule could not decide: a note on the file (or claim) it is about."""
    rule: dict = {"id": result.rule}
    if result.rule in index:
        rule["index"] = index[result.rule]
    path = result.target.partition("#")[0]  # a claim's target is REGISTRY#ID
    return {
        "level": "note",
        "message": {"text": f"{result.rule} not judged: {'; '.join(result.not_judged)}"},
        "locations": [_location(path, None)],
        "associatedRule": rule,
    }


def _location(path: str, line: int | None, **region: int) -> dict:
    """A physical location: the path relative to the checked root, and the lines (1-based)."""
    physical: dict = {"artifactLocation": {"uri": quote(path), "uriBaseId": "%SRCROOT%"}}
    if line:
        physical["region"] = {"startLine": line, **region}
    return {"physicalLocation": physical}
