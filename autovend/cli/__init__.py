"""Command-line interface: `autovend --help` lists the commands, one line each."""

from __future__ import annotations

import sys

from autovend.cli.app import app

# Each module registers its commands on `app` when imported (keep one line per module).
from autovend.cli import adapt as _adapt  # noqa: F401,E402  (adapt nj-vending)
from autovend.cli import check as _check  # noqa: F401,E402  (check SOURCE_DIR)
from autovend.cli import console as _console  # noqa: F401,E402  (console: replay runs, play an episode)
from autovend.cli import data as _data  # noqa: F401,E402  (synth, calibrate)
from autovend.cli import replay as _replay  # noqa: F401,E402  (replay RUN_DIR --day N)
from autovend.cli import run as _run  # noqa: F401,E402  (run, compare)
from autovend.cli import serve as _serve  # noqa: F401,E402  (serve: the tools over MCP)
from autovend.cli import source as _source  # noqa: F401,E402  (init-source NAME: params file and pipeline)
from autovend.cli import sweep as _sweep  # noqa: F401,E402  (sweep SPEC --out DIR: runs on Dask)
from autovend.cli import verify as _verify  # noqa: F401,E402  (verify RUN: re-simulate a run and check it)
from autovend.cli import world as _world  # noqa: F401,E402  (export-world, world info)
from autovend.cli import variants as _variants  # noqa: F401,E402  (world scenarios, world derive, world draw)


def main() -> None:
    """Entry point of the `autovend` console script; AutoVend errors exit 2 with their message, Ctrl-C 130.

    So does a command that needs a package of an extra that is not installed (`autovend.extras`).
    """
    from autovend.errors import AutoVendError
    from autovend.extras import missing_extra

    try:
        app()
    except KeyboardInterrupt:
        # commands that can be continued say how where they catch it; this is the one line for the others
        print("interrupted", file=sys.stderr)
        sys.exit(130)
    except AutoVendError as exc:
        from rich.console import Console
        from rich.markup import escape

        # the message is text, not markup: it may quote a user's cells ("[/x]") or names (":a:" is an emoji code)
        Console(stderr=True, emoji=False).print(f"[bold red]error:[/] {escape(str(exc))}")
        sys.exit(2)
    except ModuleNotFoundError as exc:
        message = missing_extra(exc)
        if message is None:
            raise
        from rich.console import Console
        from rich.markup import escape

        Console(stderr=True, emoji=False).print(f"[bold red]error:[/] {escape(message)}", soft_wrap=True)
        sys.exit(2)


__all__ = ["app", "main"]
