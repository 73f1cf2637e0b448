"""Named exceptions; each docstring says how to fix the problem."""

from __future__ import annotations


class AutoVendError(Exception):
    """Base class of every error AutoVend raises on purpose; the message says what to do next."""


class SourceError(AutoVendError):
    """A source folder breaks the raw-records contract: run `autovend check DIR` and fix what it lists."""


class InsufficientDataError(AutoVendError):
    """A source is too small to estimate a quantity: the message names the quantity and the minimum data."""


class CalibrationError(AutoVendError):
    """An estimate cannot be computed to the precision an export needs; the message says which and why."""


class NonFiniteError(AutoVendError, ValueError):
    """An exported value would be NaN or infinite: the estimate is not identified by the source (see the message)."""


class BundleError(AutoVendError):
    """A world bundle is changed, partial or of a newer schema: re-export it with `autovend export-world`."""


class ExportError(AutoVendError):
    """Calibration, source and settings disagree, so no world can be exported: fix the input named."""


class EpisodeOver(AutoVendError):
    """The episode has ended (day 180 is settled): start a new one with `reset`."""


class ConfigError(AutoVendError):
    """A settings or params file is invalid: the message names the key and the accepted values."""


class AdaptError(AutoVendError):
    """A raw export cannot be adapted (missing, unreadable, or lacking columns): the message says which."""


class OutputExistsError(AutoVendError):
    """An output folder is not empty: choose another folder, or pass `--force` to replace it."""


class OutputBusyError(AutoVendError):
    """Another command is writing the output folder: wait for it to end, then run the command again."""


class OutputWriteError(AutoVendError):
    """An output folder cannot be made or written (no such place, no permission, no space): choose another."""


class CheckpointError(AutoVendError):
    """A simulator checkpoint is unreadable or of another world: load it with the world it was saved from."""


class RunFolderError(AutoVendError):
    """A run folder is missing files or cannot be read: point at a folder written by `autovend run`, or re-run it."""


class LLMError(AutoVendError):
    """The model endpoint failed or is misconfigured: check the URL, key and model name, then `--resume` the run."""


class MCPBridgeError(AutoVendError):
    """The MCP tool server is unreachable or serves another episode: check its command or URL, world and seed."""


class AgentError(AutoVendError):
    """An agent broke the run protocol (no end_day, a second one, sys.exit): fix the agent, then `--resume`."""


class RunFolderBusyError(RunFolderError):
    """Another process is writing the run folder: wait for it to end (or stop it), then run again."""


class PrivilegeError(AutoVendError, PermissionError):
    """Agent code asked for the hidden state of an episode (`autovend.env.boundary`): act through the tools only."""
