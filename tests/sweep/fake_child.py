"""A stand-in for `autovend.sweep.child` that speaks its protocol and does what its payload says (tests only).

{"do": "ok"}           one day event, then the outcome
{"do": "sleep"}        one day event, then sleeps (as a plugin stuck in act_day)
{"do": "exit"}         os._exit(3) after one day event (as a plugin calling os._exit)
{"do": "deaf"}         ignores SIGTERM and sleeps: only SIGKILL ends it
{"do": "chatty"}       writes 1 MB to its stdout (a plugin that prints), then the outcome
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time


def main() -> None:
    out = os.fdopen(int(sys.argv[1]), "wb")
    do = json.loads(sys.stdin.read())["do"]

    def send(**msg: object) -> None:
        out.write(json.dumps(msg).encode() + b"\n")
        out.flush()

    send(kind="day", day=1, days=3)
    if do == "sleep":
        time.sleep(600)
    elif do == "exit":
        os._exit(3)
    elif do == "deaf":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        time.sleep(600)
    elif do == "mute":
        out.close()
        time.sleep(600)
    elif do == "flood":
        out.write(b"x" * (3 << 20))
        out.write(b"\n")
    elif do == "chatty":
        sys.stdout.write("x" * (1 << 20))
        sys.stdout.flush()
    send(kind="outcome", status="ran", resumed_from=None)


if __name__ == "__main__":
    main()
