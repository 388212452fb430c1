"""Learned start poses (Blow 2002, "CCD Convergence Issues").

A preprocess samples reachable targets, tries many start poses on all of them, clusters the
targets by place and gives each cluster the start that converges on most of it, the one that
needs the fewest iterations there among equals; at most ``max_starts`` starts are kept (the
least used give their clusters up). At solve time a target starts from the pose of the cluster
whose centroid is nearest. ``coverage`` is the share of sample targets some candidate converges
on (greedy set cover). Everything is plain arrays, so the Blender layer can store it on the armature.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .chain import Chain
from .settings import SolveSettings

Array = NDArray[np.float64]


@dataclass(frozen=True, eq=False)
class LearnedStarts:
    """Start poses (K, n, 4), target centroids (C, D) and the start each centroid uses (C,).
    A chain's targets are its goal positions (D = 3); a body's, its effectors' (D = 3 × E)."""

    start_rotations: Array
    centroids: Array
    centroid_start: NDArray[np.int64]
    coverage: float = float("nan")  # share of sample targets some kept start converges on
    accuracy: float = float("nan")  # share where the nearest centroid's start converges

    def starts_for(self, positions: ArrayLike) -> Array:
        """(N, n, 4) start poses for targets (N, D) in the root frame (a NaN coordinate, a goal
        switched off, counts for nothing)."""
        positions = np.asarray(positions, dtype=float).reshape(-1, self.centroids.shape[1])
        return self.start_rotations[self.centroid_start[_nearest(positions, self.centroids)]]

    def to_arrays(self) -> dict[str, np.ndarray]:
        return {
            "start_rotations": self.start_rotations,
            "centroids": self.centroids,
            "centroid_start": self.centroid_start,
            "coverage": np.array(self.coverage),
            "accuracy": np.array(self.accuracy),
        }

    @classmethod
    def from_arrays(cls, arrays: dict[str, ArrayLike]) -> LearnedStarts:
        starts = np.asarray(arrays["start_rotations"], dtype=float)
        centroids = np.asarray(arrays["centroids"], dtype=float)
        centroids = centroids.reshape(-1, 3) if centroids.ndim < 2 else centroids
        owners = np.asarray(arrays["centroid_start"], dtype=np.int64).reshape(-1)
        if starts.ndim != 3 or starts.shape[-1] != 4 or len(owners) != len(centroids):
            raise ValueError("learned starts: arrays have inconsistent shapes")
        if len(owners) == 0 or owners.min() < 0 or owners.max() >= len(starts):
            raise ValueError("learned starts: centroid_start points at a start pose that does not exist")
        return cls(
            starts, centroids, owners, float(arrays.get("coverage", np.nan)), float(arrays.get("accuracy", np.nan))
        )


# Sample targets per cluster at least: a cluster's start is chosen by its members' solves.
SAMPLES_PER_CLUSTER = 12


def _nearest(points: Array, centroids: Array) -> NDArray[np.intp]:
    """Per point, the first nearest centroid: ``argmin`` of the squared distances, summed one
    coordinate after another as numpy sums (dx² + dy²) + dz², one centroid at a time (no (N,
    C, D) temporary: 10,000 targets and 48 centroids took 17 ms that way, 3 ms this way). A
    NaN coordinate adds nothing."""
    columns = [np.ascontiguousarray(column) for column in points.T]
    switched_off = bool(np.isnan(points).any())
    best = np.full(len(points), np.inf)
    owner = np.zeros(len(points), dtype=np.intp)
    closer = np.empty(len(points), dtype=bool)
    for k, centroid in enumerate(centroids.tolist()):
        squared = np.zeros(len(points))
        for column, at in zip(columns, centroid, strict=True):
            step = column - at
            squared += (np.nan_to_num(step) if switched_off else step) ** 2
        np.less(squared, best, out=closer)  # strictly: ties stay with the first centroid
        np.copyto(best, squared, where=closer)
        owner[closer] = k
    return owner


def _k_means(points: Array, count: int, rng: np.random.Generator, rounds: int = 20) -> Array:
    """Lloyd's algorithm from random seeds; returns up to ``count`` centroids."""
    count = min(count, len(points))
    centroids = points[rng.choice(len(points), count, replace=False)]
    for _ in range(rounds):
        owner = _nearest(points, centroids)
        for k in range(count):
            members = points[owner == k]
            if len(members):
                centroids[k] = members.mean(axis=0)
    return centroids


def check_counts(**counts: int) -> None:
    """ValueError naming the first count that is not a whole number of at least 1."""
    for name, value in counts.items():
        if not (isinstance(value, numbers.Integral) and value >= 1):
            raise ValueError(f"{name} must be a whole number of at least 1, not {value!r}")


def learn_start_poses(
    chain: Chain,
    *,
    samples: int = 1000,
    candidates: int = 16,
    max_starts: int = 6,
    clusters: int = 48,
    settings: SolveSettings | None = None,
    seed: int = 0,
) -> LearnedStarts:
    """Find a few start poses that together solve nearly every reachable target."""
    from .solve import solve

    check_counts(samples=samples, candidates=candidates, max_starts=max_starts, clusters=clusters)
    rng = np.random.default_rng(seed)
    settings = replace(settings or SolveSettings(), restarts=0)
    targets = chain.forward_kinematics(chain.random_poses(rng, samples)).effector
    pool = np.concatenate((chain.rest_pose(1), chain.random_poses(rng, candidates - 1)))
    # Every candidate on every target, in one batch: (candidates × samples) solves.
    trial = solve(
        chain,
        np.tile(targets, (candidates, 1)),
        start_rotations=np.repeat(pool, samples, axis=0),
        settings=settings,
    )
    converged = trial.converged.reshape(candidates, samples)
    iterations = np.asarray(trial.iterations, dtype=float).reshape(candidates, samples)

    return choose_starts(pool, targets, converged, iterations, max_starts, clusters, rng)


def choose_starts(
    pool: Array,
    targets: Array,
    converged: NDArray[np.bool_],
    iterations: Array,
    max_starts: int,
    clusters: int,
    rng: np.random.Generator,
) -> LearnedStarts:
    """The learned starts from a trial of every candidate of ``pool`` (K, n, 4) on every sample
    target (S, D): which converged (K, S) and in how many iterations (K, S)."""
    samples = len(targets)
    candidates = len(pool)
    # Coverage: the greedy set cover's share of sample targets the candidates converge on.
    covered = np.zeros(samples, dtype=bool)
    while True:
        gains = np.sum(converged & ~covered, axis=1)
        best = int(np.argmax(gains))
        if gains[best] == 0:
            break
        covered |= converged[best]

    # Cluster the targets by place (each cluster with enough members that its choice below is
    # more than chance), then give each cluster the candidate that converges on most of its
    # members, and of those the one that gets there in the fewest iterations (while every
    # candidate may be used, never worse than any single start on the samples), so a region's
    # targets start from the candidate nearest to solving them.
    centroids = _k_means(targets, min(clusters, max(1, samples // SAMPLES_PER_CLUSTER)), rng)
    member_of = _nearest(targets, centroids)
    wins = np.stack([np.bincount(member_of, weights=converged[k], minlength=len(centroids)) for k in range(candidates)])
    effort = np.stack(
        [np.bincount(member_of, weights=iterations[k], minlength=len(centroids)) for k in range(candidates)]
    )
    usable = np.ones(candidates, dtype=bool)
    while True:
        ranked = np.where(usable[:, None] & (wins == np.max(wins[usable], axis=0)), effort, np.inf)
        centroid_start = np.argmin(ranked, axis=0)  # (clusters,): the first of equals
        used = np.unique(centroid_start)
        if len(used) <= max_starts:
            break
        # Too many starts: the one the fewest sample targets use gives its clusters up.
        users = np.bincount(centroid_start[member_of], minlength=candidates)
        usable[used[np.argmin(users[used])]] = False
    learned = LearnedStarts(pool[used], centroids, np.searchsorted(used, centroid_start).astype(np.int64))
    # How often the nearest-centroid choice picks a start that converges.
    chosen = used[learned.centroid_start[member_of]]
    accuracy = float(np.mean(converged[chosen, np.arange(samples)]))
    return replace(learned, coverage=float(np.mean(covered)), accuracy=accuracy)
