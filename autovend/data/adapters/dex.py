"""EVA-DTS ("DEX/UCS") audit files: reading one audit, and checking a machine's series of them.

A vending machine reports through EVA-DTS audits, read at each service visit: plain text records, one per line
(CR LF), fields separated by '*'. The records this adapter reads, after the standard's public field descriptions:

    DXS*<sender>*VA*<version>*1        transmission start          DXE*1*1   transmission end
    ID1*<machine serial>*<model>*...   the machine (ID101)         ID4*<decimal places>*<ISO 4217 numeric code>
    EA3*<reads>*<date>*<time>          this read: date YYMMDD or YYYYMMDD, time HHMM or HHMMSS (EA302, EA303)
    PA1*<selection>*<price>*<product>  one selection: its price in minor units and the product it sells
    PA2*<vends>*<value>*...            that selection's paid vends and their value since initialisation

Counters are cumulative since the machine was initialised, so a series of audits gives, per selection, the vends
and their value between two reads; the read days are the service visits. Other records (VA1, CA*, LS/LE, G85, SE,
...) are allowed and not read. Every refusal names the file, the line and the fix (`AdaptError`).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from pathlib import Path

from autovend.errors import AdaptError

# ISO 4217 numeric -> alphabetic code, for ID402 (the currencies an operator is likely to audit in)
CURRENCY_NUMERIC: dict[str, str] = {
    "036": "AUD", "124": "CAD", "156": "CNY", "203": "CZK", "344": "HKD", "356": "INR", "484": "MXN",
    "554": "NZD", "643": "RUB", "702": "SGD", "756": "CHF", "826": "GBP", "840": "USD", "978": "EUR",
    "980": "UAH", "985": "PLN",
}  # fmt: skip
NUMERIC_OF = {code: num for num, code in CURRENCY_NUMERIC.items()}
MAX_AUDIT_BYTES = 5_000_000  # an audit is a few kB
_DIGITS = re.compile(r"\d+")


@dataclass(frozen=True)
class Selection:
    """One selection (PA1/PA2) of an audit: its price (minor units), product id and cumulative counters."""

    selection: str
    price: int
    product: str
    vends: int
    value: int
    line: int


@dataclass(frozen=True)
class Audit:
    """One DEX audit file: the machine, when it was read, its money's minor unit, and its selections."""

    file: str
    machine: str
    read_at: dt.datetime
    decimals: int
    currency: str  # "" when the file has no ID4
    selections: dict[str, Selection] = field(default_factory=dict)


def _fail(file: str, line: int | None, what: str, fix: str) -> AdaptError:
    where = f"{file} line {line}" if line is not None else file
    return AdaptError(f"{where}: {what}; {fix}")


def _count(file: str, line: int, name: str, text: str) -> int:
    """A whole number >= 0 of a DEX field, or an AdaptError naming it."""
    if not _DIGITS.fullmatch(text.strip()):
        raise _fail(file, line, f"{name} is {text!r}, not a whole number >= 0", "correct the audit or leave it out")
    return int(text)


def _read_time(file: str, line: int, date: str, time: str) -> dt.datetime:
    date, time = date.strip(), (time.strip() or "0000")
    try:
        if len(date) == 6:
            day = dt.datetime.strptime(date, "%y%m%d").date()
        elif len(date) == 8:
            day = dt.datetime.strptime(date, "%Y%m%d").date()
        else:
            raise ValueError(date)
        clock = dt.datetime.strptime(time, "%H%M%S" if len(time) == 6 else "%H%M").time()
    except ValueError:
        raise _fail(
            file, line, f"EA3 read date/time {date!r} {time!r} is not YYMMDD (or YYYYMMDD) and HHMM (or HHMMSS)",
            "correct the audit's EA3 record",
        ) from None  # fmt: skip
    return dt.datetime.combine(day, clock)


def parse_audit(text: str, file: str) -> Audit:
    """One audit's machine, read time, money and selections (see the module docstring); AdaptError in words."""
    if len(text) > MAX_AUDIT_BYTES:
        raise _fail(file, None, f"is over {MAX_AUDIT_BYTES:,} characters, not one DEX audit", "give one audit a file")
    lines = [ln.strip() for ln in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    records = [(i + 1, ln.split("*")) for i, ln in enumerate(lines) if ln]
    tags = [r[0] for _, r in records]
    if not tags or tags[0] != "DXS" or "DXE" not in tags:
        raise _fail(file, None, "is not a DEX/UCS audit (it must open with DXS and close with DXE)", "give audit files")
    machine, read_at, decimals, currency = "", None, 2, ""
    selections: dict[str, Selection] = {}
    pending: tuple[int, list[str]] | None = None  # the last PA1, waiting for its PA2
    for n, fields in records:
        tag, vals = fields[0], [*fields[1:], "", "", "", ""]
        if tag == "ID1":
            machine = vals[0].strip()
        elif tag == "ID4":
            decimals = _count(file, n, "ID401 (decimal places)", vals[0] or "2")
            currency = CURRENCY_NUMERIC.get(vals[1].strip().zfill(3), "") if vals[1].strip() else ""
            if vals[1].strip() and not currency:
                raise _fail(file, n, f"ID402 currency code {vals[1]!r} is not one this adapter knows",
                            f"give --currency (known: {', '.join(sorted(NUMERIC_OF))})")  # fmt: skip
        elif tag == "EA3":
            read_at = _read_time(file, n, vals[1], vals[2])
        elif tag == "PA1":
            if not vals[0].strip():
                raise _fail(file, n, "PA1 has no selection number (PA101)", "correct the audit")
            pending = (n, vals)
        elif tag == "PA2":
            if pending is None:
                raise _fail(file, n, "PA2 comes before any PA1", "each PA2 follows the PA1 of its selection")
            m, pa1 = pending
            sel = pa1[0].strip()
            if sel in selections:
                raise _fail(file, m, f"selection {sel} is audited twice", "give each selection one PA1/PA2 pair")
            selections[sel] = Selection(
                sel,
                _count(file, m, "PA102 (price)", pa1[1] or "0"),
                pa1[2].strip(),
                _count(file, n, "PA201 (paid vends since initialisation)", vals[0]),
                _count(file, n, "PA202 (value of paid vends since initialisation)", vals[1] or "0"),
                n,
            )
            pending = None
    if not machine:
        raise _fail(file, None, "has no ID1 record with a machine serial number (ID101)", "correct the audit")
    if read_at is None:
        raise _fail(file, None, "has no EA3 record with the read's date and time", "correct the audit")
    return Audit(file, machine, read_at, decimals, currency, selections)


def read_audits(paths: list[Path]) -> list[Audit]:
    """Every audit file of `paths` (folders are searched for *.dex and *.txt), parsed; sorted by machine and time."""
    files: list[Path] = []
    for p in paths:
        if p.is_dir():
            files += sorted(q for q in p.rglob("*") if q.is_file() and q.suffix.lower() in (".dex", ".txt"))
        elif p.is_file():
            files.append(p)
        else:
            raise AdaptError(f"{p} does not exist; give DEX audit files or folders of them")
    if not files:
        raise AdaptError(f"no audit files (*.dex, *.txt) in {', '.join(map(str, paths))}")
    audits = []
    for f in files:
        try:
            text = f.read_bytes().decode("ascii")
        except UnicodeDecodeError as exc:
            raise AdaptError(f"{f}: byte {exc.start} is not ASCII text; a DEX audit is ASCII") from None
        audits.append(parse_audit(text, str(f)))
    return sorted(audits, key=lambda a: (a.machine, a.read_at))
