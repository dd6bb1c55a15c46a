#!/usr/bin/env python3
"""Build the sample datapoints from the snapshot folders and the list of edits below.

Standard library only. Run from anywhere:

    python3 testdata/sample/make_sample.py          # (re)write the four jsonl files
    python3 testdata/sample/make_sample.py --check  # exit 1 if the jsonl files are out of date

Each edit simulates one commit made on top of a snapshot (the revision BEFORE the change):
the script reads the old completion file from
repositories-{lang}-sample/{owner}__{repo}-{revision}/{path}, inserts the middle lines so that
the first of them becomes line `line` (1-based) of the new file, and splits the new file into
prefix / middle / suffix. The snapshot folders are written by hand and never touched here.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent

REPOS = {"python": "acme/invoicing", "kotlin": "acme/tracker"}

# Made-up 40-hex revision and commit ids (sha1 of a word, e.g. sha1("invoicing-r1")).
INVOICING_R1 = "3883f317f2454c5c841829b87ede02c71c20ef65"
INVOICING_R2 = "9ff1acde1a5ac71c0c750cec351f7b8f2aff43d7"
TRACKER_R1 = "2bdd77b1ea5dbfec89a992ee2c1d7061bb4da0c9"
TRACKER_R2 = "528745a191d579c8bac4254c06097b43a65d2cf6"

KT_MAIN = "src/main/kotlin/com/acme/tracker/"
KT_TEST = "src/test/kotlin/com/acme/tracker/"


@dataclass(frozen=True)
class Edit:
    lang: str
    revision: str  # snapshot the commit starts from
    commit: str  # the commit that adds the middle
    path: str  # completion file, relative to the snapshot root
    line: int  # 1-based line of the first middle line in the new file
    middle: tuple[str, ...]  # whole lines, without their "\n"
    also_modified: tuple[str, ...] = ()  # other files the commit touched (must exist in the snapshot)
    after: str = ""  # sanity check: the old line just above the insertion point, stripped

    @property
    def repo(self) -> str:
        return REPOS[self.lang]

    @property
    def id(self) -> str:
        return f"{self.repo.replace('/', '__')}-{self.commit[:7]}-L{self.line}"

    @property
    def snapshot(self) -> Path:
        owner_repo = self.repo.replace("/", "__")
        return HERE / f"repositories-{self.lang}-sample" / f"{owner_repo}-{self.revision}"


EDITS = [
    # --- python, snapshot r1 ---
    Edit(
        "python", INVOICING_R1, "5ac8fb5e9fe0ca4ab428269ba25b72d0194991de",
        "invoicing/cli.py", 66,
        ('    overdue.add_argument("--date", help="issue date for CSV input (YYYY-MM-DD)")',),
        after='overdue.add_argument("source", help="CSV export or JSON file")',
    ),
    Edit(
        "python", INVOICING_R1, "beb78b18d747b0a108c93755f0629c3c6bab309c",
        "invoicing/importers.py", 93,
        ('        payment_terms_days=int(data.get("payment_terms_days", 30)),',),
        also_modified=("invoicing/models.py", "tests/test_importers.py"),
        after='issued_on=date.fromisoformat(data["issued_on"]),',
    ),
    # --- python, snapshot r2 ---
    Edit(
        "python", INVOICING_R2, "0b43f660c35eaa5aa18eebd6cf50f46a687e9912",
        "invoicing/exporters.py", 33,
        (
            "    if totals.discount:",
            '        lines.append(_row("Volume discount", -totals.discount, currency))',
        ),
        also_modified=("tests/test_exporters.py",),
        after='lines.append(_row("Net", totals.net, currency))',
    ),
    Edit(
        "python", INVOICING_R2, "868fa6d5d645a246fb3b594f6f3757ad4642b087",
        "tests/test_importers.py", 57,
        ("    assert loaded.due_on == date(2024, 3, 15)",),
        after="assert loaded.payment_terms_days == 14",
    ),
    # --- kotlin, snapshot r1 ---
    Edit(
        "kotlin", TRACKER_R1, "24effbd836287bf48ea93a5834e46058d24829b7",
        KT_MAIN + "service/IssueService.kt", 83,
        (
            '        if (issue.status.isTerminal) return ServiceResult.Rejected('
            '"Cannot comment on $id: it is ${issue.status.displayName}")',
        ),
        also_modified=(KT_TEST + "service/IssueServiceTest.kt",),
        after="val issue = repository.findById(id) ?: return ServiceResult.NotFound(id)",
    ),
    Edit(
        "kotlin", TRACKER_R1, "0b2dc2c10699c5491f469733f456cd8784d43438",
        KT_MAIN + "util/Extensions.kt", 39,
        ("fun Collection<Issue>.countByPriority(): Map<Priority, Int> = groupingBy { it.priority }.eachCount()",),
        also_modified=(KT_TEST + "util/ExtensionsTest.kt",),
        after="fun Collection<Issue>.countByStatus(): Map<Status, Int> = groupingBy { it.status }.eachCount()",
    ),
    # --- kotlin, snapshot r2 ---
    Edit(
        "kotlin", TRACKER_R2, "55f170ccd6305c82729907018bd2eb0050b2cfe2",
        KT_MAIN + "service/IssueService.kt", 96,
        ("        publish(IssueEvent.PriorityChanged(id, updated.updatedAt, issue.priority, raised))",),
        also_modified=(KT_TEST + "service/IssueServiceTest.kt",),
        after="val updated = repository.save(issue.copy(priority = raised, updatedAt = clock.instant()))",
    ),
    Edit(
        "kotlin", TRACKER_R2, "9120521e11c5f6be970c5210b2906420573c96c9",
        KT_TEST + "service/IssueServiceTest.kt", 101,
        ("        assertIs<ServiceResult.Rejected>(service.escalate(issue.id))",),
        after="assertEquals(Priority.CRITICAL, service.escalate(issue.id).getOrThrow().priority)",
    ),
]


def build(edit: Edit) -> tuple[dict, dict]:
    old_file = edit.snapshot / edit.path
    old_lines = old_file.read_text(encoding="utf-8").splitlines(keepends=True)
    if not 1 <= edit.line <= len(old_lines) + 1:
        raise SystemExit(f"{edit.id}: line {edit.line} outside {old_file} ({len(old_lines)} lines)")
    if edit.line > 1 and not old_lines[edit.line - 2].endswith("\n"):
        raise SystemExit(f"{edit.id}: line {edit.line - 1} of {old_file} has no newline")
    if edit.after and old_lines[edit.line - 2].strip() != edit.after:
        raise SystemExit(
            f"{edit.id}: expected {edit.after!r} above the insertion point, "
            f"found {old_lines[edit.line - 2].strip()!r}"
        )
    modified = sorted({edit.path, *edit.also_modified})
    for name in modified:
        if not (edit.snapshot / name).is_file():
            raise SystemExit(f"{edit.id}: modified file {name} is not in the snapshot")

    prefix = "".join(old_lines[: edit.line - 1])
    middle = "".join(line + "\n" for line in edit.middle)
    suffix = "".join(old_lines[edit.line - 1 :])
    if edit.lang == "python":
        try:
            compile(prefix + middle + suffix, f"{edit.id}:{edit.path}", "exec")
        except SyntaxError as exc:
            raise SystemExit(f"{edit.id}: new file does not compile: {exc}") from None

    datapoint = {
        "id": edit.id,
        "repo": edit.repo,
        "revision": edit.revision,
        "path": edit.path,
        "modified": modified,
        "prefix": prefix,
        "suffix": suffix,
    }
    truth = {"id": edit.id, "middle": middle, "commit": edit.commit, "kind": "insert"}
    return datapoint, truth


def render() -> dict[Path, str]:
    outputs: dict[Path, list[str]] = {}
    for lang in REPOS:
        outputs[HERE / f"{lang}-sample.jsonl"] = []
        outputs[HERE / f"{lang}-sample.truth.jsonl"] = []
    seen: set[str] = set()
    for edit in EDITS:
        if edit.id in seen:
            raise SystemExit(f"duplicate id {edit.id}")
        seen.add(edit.id)
        datapoint, truth = build(edit)
        outputs[HERE / f"{edit.lang}-sample.jsonl"].append(json.dumps(datapoint))
        outputs[HERE / f"{edit.lang}-sample.truth.jsonl"].append(json.dumps(truth))
    return {path: "\n".join(lines) + "\n" for path, lines in outputs.items()}


def main(argv: list[str]) -> int:
    files = render()
    if "--check" in argv:
        stale = [p.name for p, text in files.items() if not p.is_file() or p.read_text(encoding="utf-8") != text]
        if stale:
            print("out of date: " + ", ".join(stale), file=sys.stderr)
            return 1
        print(f"{len(EDITS)} datapoints up to date")
        return 0
    for path, text in files.items():
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path.relative_to(HERE)} ({text.count(chr(10))} datapoints)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
