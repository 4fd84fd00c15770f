"""The conformance report: one row per feature, as text, JSON and HTML (every text escaped)."""

from __future__ import annotations

import html
import json
import math
from dataclasses import asdict, dataclass, field, fields

from ..tables import display_width, fit, text_table

PASS, FAIL, UNSUPPORTED = "pass", "fail", "unsupported"
SEE = "see"  # fails only in cases that need another row, which fails on its own: see that row


@dataclass
class Failure:
    """The smallest failing case of a feature and where its output differs."""

    case: str  # shapes, mask, dtype, arguments
    message: str  # what went wrong (error vs budget, an exception, NaN, a shape)
    where: str = ""  # which rows / heads / batches differ
    matches: list[str] = field(default_factory=list)  # ids of the conventions the output follows
    what: str = ""  # those conventions in words ("is_causal aligned bottom-right ...")


@dataclass
class FeatureResult:
    id: str
    title: str
    status: str  # pass, fail, unsupported or see
    error: float = 0.0  # worst max |error| over the feature's cases (relative to budget)
    budget: float = 0.0  # the tolerance for that case
    cases: int = 0  # how many cases ran
    failure: Failure | None = None
    note: str = ""  # why unsupported, or which cases were refused
    refusal: str = ""  # the first refusal's exception, e.g. "NotImplementedError: no masks"
    see: list[str] = field(default_factory=list)  # status see: the rows its failures need
    failing_case: object = field(default=None, repr=False, compare=False)  # calls.CaseResult

    @property
    def shown_status(self) -> str:
        """The status as the table shows it: 'see causal' for a row failing through causal."""
        return f"see {', '.join(self.see)}" if self.status == SEE else self.status

    def to_dict(self) -> dict:
        d = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "failing_case"}
        d["failure"] = asdict(self.failure) if self.failure else None
        for key in ("error", "budget"):  # JSON has no infinity
            d[key] = d[key] if math.isfinite(d[key]) else None
        return d


@dataclass
class Report:
    target: str
    api: str
    device: str
    seed: int
    torch: str
    features: list[FeatureResult] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """Every supported feature passed (unsupported ones are listed, not counted), and at
        least one did: a function that refuses every case has shown nothing."""
        ok = not self.failed and not any(f.status == SEE for f in self.features)
        return ok and any(f.status == PASS for f in self.features)

    @property
    def failed(self) -> list[FeatureResult]:
        return [f for f in self.features if f.status == FAIL]

    def counts(self) -> dict[str, int]:
        return {s: sum(f.status == s for f in self.features) for s in (PASS, FAIL, UNSUPPORTED)}

    def __getitem__(self, feature_id: str) -> FeatureResult:
        for f in self.features:
            if f.id == feature_id:
                return f
        raise KeyError(feature_id)

    def to_dict(self) -> dict:
        return {
            "target": self.target,
            "api": self.api,
            "device": self.device,
            "seed": self.seed,
            "torch": self.torch,
            "passed": self.passed,
            "counts": self.counts(),
            "features": [f.to_dict() for f in self.features],
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)

    def summary(self) -> str:
        c = self.counts()
        text = f"{c[PASS]} passed, {c[FAIL]} failed, {c[UNSUPPORTED]} unsupported"
        seen = sum(f.status == SEE for f in self.features)
        if seen:
            text += f", {seen} failing only through another row (see it)"
        if not c[PASS] and not c[FAIL]:
            text += self._nothing_checked()
        if not c[PASS] and self.api == "torch" and self._tripped_on_tensors():
            text += f"\nif {self.target} takes NumPy arrays, not torch tensors, add --api numpy"
        return text

    def _nothing_checked(self) -> str:
        """Why no row was judged: the signature only when every refusal is a TypeError about
        arguments; a backend that refused every case (no kernel) is named as such."""
        said = [f.refusal for f in self.features if f.refusal]
        if not said or all(s.startswith("TypeError") and "argument" in s for s in said):
            return " (nothing was checked: is the signature torch's SDPA signature?)"
        return f" (nothing was checked: every case was refused, e.g. {said[0]})"

    def _tripped_on_tensors(self) -> bool:
        """Some case was refused or failed with an error about torch's types (a NumPy function
        given tensors: "unsupported operand type(s) for -: 'Tensor' and ...")."""
        said = [f.note + (f.failure.message if f.failure else "") for f in self.features]
        return any("Tensor" in s or "torch" in s for s in said)

    def __str__(self) -> str:
        return self.text()

    def text(self, width: int | None = None) -> str:
        """The report as ``attnlab conform`` prints it; with ``width``, its lines fit that many
        terminal columns (the table's last column, what each feature checks, wraps)."""
        head = (
            f"attnlab conform {self.target} (api {self.api}, device {self.device}, "
            f"seed {self.seed}, torch {self.torch})"
        )
        lines = [head, "", self._table(width), ""]
        for f in self.features:
            if f.failure is not None:  # its smallest failing case, not the table's worst one
                lines.append(f"FAIL {f.id}, on its smallest failing case: {f.failure.message}")
                lines.append(f"  smallest failing case: {f.failure.case}")
                if f.failure.where:
                    lines.append(f"  differs at: {f.failure.where}")
                if f.failure.what:
                    lines.append(f"  looks like: {f.failure.what}")
            elif f.status in (UNSUPPORTED, SEE) or f.note:
                lines.append(f"{f.status.upper()} {f.id}: {f.note}")
        lines.append(self.summary())
        return "\n".join(lines) if width is None else fit("\n".join(lines), width)

    def _table(self, width: int | None) -> str:
        """One row per feature. When the table is too wide for ``width`` even with its last
        column wrapped, a row failing through others says just 'see' (its line under the table
        names them)."""
        header = ["feature", "status", "worst error", "budget", "cases", "what"]
        for status in (FeatureResult.shown_status.fget, lambda f: f.status):
            rows = [[f.id, status(f), *_numbers(f), f.title] for f in self.features]
            table = text_table(header, rows, width=width)
            if width is None or max(map(display_width, table.split("\n"))) <= width:
                break
        return table

    def _repr_html_(self) -> str:
        e = html.escape
        head = (
            f"<p><b>attnlab conform</b> {e(self.target)} (api {e(self.api)}, device "
            f"{e(self.device)}, seed {self.seed}, torch {e(self.torch)}): {e(self.summary())}</p>"
        )
        colour = {PASS: "#1a7f37", FAIL: "#cf222e", UNSUPPORTED: "#6e7781", SEE: "#9a6700"}
        rows = []
        for f in self.features:
            detail = f.note
            if f.failure is not None:
                detail = f"{f.failure.message}; smallest failing case: {f.failure.case}"
                detail += f"; differs at: {f.failure.where}" if f.failure.where else ""
                detail += f"; looks like: {f.failure.what}" if f.failure.what else ""
            numbers = "".join(f"<td>{e(x)}</td>" for x in _numbers(f)[:2])
            rows.append(
                f"<tr><td>{e(f.id)}</td>"
                f'<td style="color:{colour.get(f.status, "inherit")}">{e(f.shown_status)}</td>'
                f"{numbers}<td>{e(f.title)}</td><td>{e(detail)}</td></tr>"
            )
        return (
            head + "<table><thead><tr><th>feature</th><th>status</th><th>worst error</th>"
            "<th>budget</th><th>what</th><th>detail</th></tr></thead><tbody>"
            + "".join(rows)
            + "</tbody></table>"
        )


def _num(x: float) -> str:
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf"
    return f"{x:.2e}" if x else "0"


def _numbers(f: FeatureResult) -> list[str]:
    """The row's worst error, budget and case count ('-' where nothing was judged, or where
    the worst case gave nothing to compare: it raised, or its output had the wrong type or
    shape, or no gradient: its message says which)."""
    if f.status == UNSUPPORTED:
        return ["-", "-", str(f.cases) if f.cases else "-"]
    if math.isinf(f.error) and not f.budget:  # (calls._nothing_to_compare)
        return ["-", "-", str(f.cases)]
    return [_num(f.error), _num(f.budget), str(f.cases)]
