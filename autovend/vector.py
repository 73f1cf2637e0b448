"""The vector form of `AutoVend-v0`: N episodes stepped in one process, their demand sampled in one pass.

    import gymnasium
    import autovend.gym

    envs = gymnasium.make_vec("AutoVend-v0", num_envs=8, world="worlds/cn20")    # this module's native env
    obs, infos = envs.reset(seed=1)                                    # env i gets seed 1 + i (or a list)
    obs, rewards, terminated, truncated, infos = envs.step(actions)    # one JSON action text per env

`world` is one world for every sub-environment or a list of N (different worlds must share the
horizon, so that the observation spaces are the same); `days` as for `AutoVend-v0`. Every
sub-environment behaves exactly as its own `autovend.gym.AutoVendEnv` would under gymnasium's
`SyncVectorEnv` (the same observations, rewards, flags and infos: `tests/test_vector.py` holds
them equal): a step is one tool call or the end of a day per sub-environment. What this env adds
is speed: when several sub-environments end their day in the same step, their demand is drawn
first and sampled in one pass (`Simulator.draw_demand`, `Simulator.sample_draws`), which gives
the same draws as one by one.

Autoreset follows gymnasium's default (`AutoresetMode.NEXT_STEP`): the step after a sub-environment
terminates or is truncated resets it (with a seed from its own generator, as `SyncVectorEnv` does)
and ignores its action. The standard modes work too, from the single env:
`gymnasium.make_vec("AutoVend-v0", num_envs=8, vectorization_mode="async",
vector_kwargs={"shared_memory": False}, world=...)` (observations are text of up to 16 M characters:
shared memory would reserve that for every sub-environment).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space, concatenate, create_empty_array, iterate

from autovend.env.boundary import episode_of
from autovend.errors import EpisodeOver
from autovend.gym import MAX_TEXT, AutoVendEnv, _ascii_json, parse_action
from autovend.rng import run_seeds
from autovend.sim import Simulator
from autovend.tools.result import ToolResult
from autovend.world.model import World

WorldArg = str | os.PathLike[str] | World


class _SubEnv(AutoVendEnv):
    """`AutoVendEnv` with the same observations, its result text spliced rather than parsed and written again."""

    def _result(
        self, result: ToolResult, tool: str, reward: float
    ) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        """As `AutoVendEnv._result`, without parsing the result's text and writing it again.

        The transports' text is compact JSON (`autovend.tools.trajectory.dumps`): when it is printable
        ASCII, writing its parsed value again as ASCII JSON gives the same characters.
        """
        content = result.to_json()
        if not (content.isascii() and content.isprintable()):
            return super()._result(result, tool, reward)
        text = f'{{"ok":{"true" if result.ok else "false"},"content":{content},"error":{_ascii_json(result.error)}}}'
        if len(text) > MAX_TEXT:
            return super()._result(result, tool, reward)
        self._shown = text
        obs = {"kind": "result", "day": self._env.day, "text": text}
        info = {"ok": result.ok and result.error is None, "error": result.error, "tool": tool or None}
        return obs, reward, self._env.terminated, self._env.truncated, info


class AutoVendVectorEnv(VectorEnv[Any, Any, Any]):
    """N `AutoVendEnv` episodes in one process with batched demand (see the module docstring)."""

    metadata = {"render_modes": ["ansi"], "autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(
        self,
        num_envs: int,
        world: WorldArg | Sequence[WorldArg] = "worlds/cn20",
        days: int | None = None,
        render_mode: str | None = None,
        scenario: str | None = None,
    ) -> None:
        if isinstance(num_envs, (bool, np.bool_)) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be a whole number >= 1, got {num_envs!r}; pass an integer such as 8")
        num_envs = int(num_envs)
        worlds: list[WorldArg] = list(world) if isinstance(world, (list, tuple)) else [world] * num_envs  # type: ignore[list-item]
        if len(worlds) != num_envs:
            raise ValueError(f"world lists {len(worlds)} worlds for {num_envs} environments; give one or {num_envs}")
        self.num_envs = num_envs
        self.render_mode = render_mode
        self.envs: list[AutoVendEnv] = [
            _SubEnv(w, days=days, render_mode=render_mode, scenario=scenario) for w in worlds
        ]
        self.single_observation_space = self.envs[0].observation_space
        self.single_action_space = self.envs[0].action_space
        for env in self.envs[1:]:
            if env.observation_space != self.single_observation_space:
                raise ValueError("the worlds of a vector env must share their horizon (the same observation space)")
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self._env_obs: list[Any] = [None] * num_envs
        self._rewards = np.zeros(num_envs, dtype=np.float64)
        self._terminations = np.zeros(num_envs, dtype=np.bool_)
        self._truncations = np.zeros(num_envs, dtype=np.bool_)
        self._autoreset_envs = np.zeros(num_envs, dtype=np.bool_)

    def reset(
        self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Reset every sub-environment: seed None (each draws its own), an int (seed + i) or a list of N.

        Seeds are checked before any sub-environment is reset (`autovend.rng.run_seed`: a numpy integer is
        its int; a boolean, a float or text is refused with a ValueError naming the seed).
        """
        seeds = self._seeds(seed)
        infos: dict[str, Any] = {}
        for i, (env, one) in enumerate(zip(self.envs, seeds, strict=True)):
            self._env_obs[i], info = env.reset(seed=one, options=options)
            infos = self._add_info(infos, info, i)
        self._terminations[:] = False
        self._truncations[:] = False
        self._autoreset_envs[:] = False
        return self._batch(), infos

    def _seeds(self, seed: Any) -> list[int | None]:
        """The seed of each sub-environment from `reset`'s `seed` (see `reset`), or a ValueError."""
        return run_seeds(seed, self.num_envs)

    def step(
        self, actions: Any
    ) -> tuple[Any, npt.NDArray[np.float64], npt.NDArray[np.bool_], npt.NDArray[np.bool_], dict[str, Any]]:
        """One action per sub-environment; the days ended in this step have their demand sampled together."""
        acts = list(iterate(self.action_space, actions))
        if len(acts) != self.num_envs:
            raise ValueError(f"got {len(acts)} actions for {self.num_envs} environments")
        self._draw_ending_days(acts)
        infos: dict[str, Any] = {}
        for i, (env, action) in enumerate(zip(self.envs, acts, strict=True)):
            if self._autoreset_envs[i]:
                self._env_obs[i], info = env.reset()
                self._rewards[i] = 0.0
                self._terminations[i] = False
                self._truncations[i] = False
            else:
                obs, reward, terminated, truncated, info = env.step(action)
                self._env_obs[i], self._rewards[i] = obs, reward
                self._terminations[i], self._truncations[i] = terminated, truncated
            infos = self._add_info(infos, info, i)
        observations = self._batch()
        self._autoreset_envs = np.logical_or(self._terminations, self._truncations)
        return (
            observations,
            self._rewards.copy(),
            self._terminations.copy(),
            self._truncations.copy(),
            infos,
        )

    def _batch(self) -> Any:
        """The sub-environments' observations as one batch (new arrays: returned data is never reused)."""
        out = create_empty_array(self.single_observation_space, n=self.num_envs, fn=np.zeros)
        assert out is not None
        return concatenate(self.single_observation_space, self._env_obs, out)

    def _draw_ending_days(self, actions: list[Any]) -> None:
        """Draw the demand of every sub-environment that ends its day in this step and sample it in one pass."""
        sims: list[Simulator] = []
        for i, (env, action) in enumerate(zip(self.envs, actions, strict=True)):
            if self._autoreset_envs[i] or not env._started or not isinstance(action, str) or "end_day" not in action:
                continue
            parsed = parse_action(action)
            if parsed != ("end_day", {}) or env._env.done:  # end_day with arguments is refused: nothing to draw
                continue
            sims.append(episode_of(env._env).sim)
        if len(sims) < 2:
            return  # one day alone is drawn by its own end_day
        draws = []
        for sim in sims:
            try:
                draws.append(sim.draw_demand())
            except EpisodeOver:
                continue
        Simulator.sample_draws(draws)

    def render(self) -> tuple[Any, ...] | None:
        """Each sub-environment's last observation as its agent reads it (render_mode "ansi")."""
        if self.render_mode != "ansi":
            return None
        return tuple(env.render() for env in self.envs)

    def close_extras(self, **kwargs: Any) -> None:
        """Close every sub-environment's episode."""
        for env in self.envs:
            env.close()
