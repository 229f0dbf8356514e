"""How fast each importer reads the files crafted to slow it (bench/worst_imports.py), in MB/s and
as a ratio to an ordinary file of its format in the same run; and what doubling the size costs.

Run by `make bench`, or alone: .venv/bin/python bench/importers.py"""

import contextlib
import io
import sys
import time
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from worst_imports import CASES  # noqa: E402

from app.formats import FORMATS, FormatError  # noqa: E402

SIZE = 1_000_000
BASELINES = {
    "gift": "GIFT, ordinary questions",
    "aiken": "Aiken, ordinary questions",
    "moodle-xml": "Moodle XML, ordinary questions",
    "qti": "QTI 1.2, the seed",
}


def seconds(format_name: str, data: bytes, rounds: int = 3) -> float:
    """The best of a few parses: the least disturbed by whatever else the machine does."""
    best = float("inf")
    for _ in range(rounds):
        started = time.process_time()
        with contextlib.suppress(FormatError):  # a refusal is an answer too
            FORMATS[format_name].parse(data, "bench")
        best = min(best, time.process_time() - started)
    return max(best, 1e-6)


def size_of(data: bytes) -> int:
    """What the importer reads: a package's files unpacked, else the file itself."""
    if data.startswith(b"PK"):
        return sum(info.file_size for info in zipfile.ZipFile(io.BytesIO(data)).infolist())
    return len(data)


def main() -> None:
    rates = {}
    print(f"{'file':40} {'MB/s':>8} {'vs ordinary':>12} {'2x size costs':>14}")
    for name, (format_name, make) in CASES.items():
        data, double = make(SIZE), make(2 * SIZE)
        took = seconds(format_name, data)
        rates[name] = size_of(data) / took / 1e6
        grows = size_of(double) > 1.5 * size_of(data)
        growth = f"{seconds(format_name, double) / took:13.2f}x" if grows else f"{'-':>14}"
        baseline = rates.get(BASELINES.get(format_name, ""))
        versus = f"{rates[name] / baseline:.2f}" if baseline else "-"
        print(f"{name:40} {rates[name]:8.1f} {versus:>12} {growth}")


if __name__ == "__main__":
    main()
