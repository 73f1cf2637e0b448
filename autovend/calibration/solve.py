"""Root polishing for the calibration's smooth fits: Newton steps on an analytic score.

A general-purpose optimiser stops where its tolerance on the objective or the step says so; near an
optimum the objective is flat to second order, so that stopping point is only determined to about the
square root of the objective's rounding error and moves with any 1-ulp difference upstream (a CPU's
SIMD math kernels, the number of BLAS threads). Every fit whose result is exported therefore ends
with `polish`: Newton's method on the analytic gradient of its log-likelihood (the score), which
converges quadratically to the score's root. The root is a property of the data, not of the path
the optimiser took, and the polished estimate agrees to about 1e-13 relative wherever the fit is run.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from autovend.errors import CalibrationError

Score = Callable[[np.ndarray], np.ndarray]

FD_STEP = 1e-6  # relative step of the central differences that give the Jacobian of the score
STEP_TOL = 1e-12  # Newton stops when no coordinate moves by more than this (relative to max(1, |x|))
NOISE_STEP = 1e-10  # a step this small that cannot reduce the score is rounding noise: x is the root
MAX_STEPS = 60


def _jacobian(score: Score, x: np.ndarray) -> np.ndarray:
    n = len(x)
    jac = np.empty((n, n))
    for j in range(n):
        h = FD_STEP * max(1.0, abs(float(x[j])))
        up, down = x.copy(), x.copy()
        up[j] += h
        down[j] -= h
        jac[:, j] = (score(up) - score(down)) / (2.0 * h)
    return 0.5 * (jac + jac.T)  # the Hessian of a log-likelihood is symmetric


def polish(score: Score, x0: np.ndarray | float, *, what: str) -> np.ndarray:
    """The root of `score` next to `x0` (a maximiser of a concave-near-x0 log-likelihood), by damped Newton.

    Raises CalibrationError (naming `what`) when the score has no root nearby: Newton does not settle
    within MAX_STEPS, or the Hessian is not negative definite there (not a maximum).
    """
    x = np.atleast_1d(np.asarray(x0, dtype=float)).copy()
    g = score(x)
    for _ in range(MAX_STEPS):
        jac = _jacobian(score, x)
        try:
            step = -np.linalg.solve(jac, g)
        except np.linalg.LinAlgError as exc:
            raise CalibrationError(f"{what}: the log-likelihood is flat at the optimiser's estimate ({exc})") from exc
        # halve the step while it makes the score larger (the quadratic model overshoots far from the root)
        size = float(np.max(np.abs(g)))
        for _halving in range(30):
            g_new = score(x + step)
            if np.all(np.isfinite(g_new)) and float(np.max(np.abs(g_new))) <= size * (1.0 + 1e-9):
                break
            step = 0.5 * step
        else:
            if np.all(np.abs(step) <= NOISE_STEP * np.maximum(1.0, np.abs(x))):
                return x  # no step reduces the score: x is as close to the root as its rounding allows
            break
        x = x + step
        g = g_new
        if np.all(np.abs(step) <= STEP_TOL * np.maximum(1.0, np.abs(x))):
            if np.any(np.linalg.eigvalsh(_jacobian(score, x)) >= 0):
                raise CalibrationError(f"{what}: the score's root is not a maximum of the log-likelihood")
            return x
    raise CalibrationError(
        f"{what}: Newton's method on the score did not settle in {MAX_STEPS} steps "
        f"(last score {np.array2string(g, precision=3)}); the data may not identify it"
    )
