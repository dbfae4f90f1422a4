"""Loads `crowdpatch bake --trajectories` files with PedPy as it is and
computes their speed profiles: the check that a peer tool reads what the
bake writes (issue 31, item 8; docs/realism.md "Trajectories for PedPy").

Usage: python check.py REPORT.json TRAJECTORIES.txt [PNG]

For each file: PedPy's `load_trajectory` (frame rate and unit from the
file's header), its individual speeds (`compute_individual_speed`, 0.2 s
steps), their median set against the bake report's speed median
(`metrics.realism.crowd.speed.p50`, sampled every 0.4 s; within 10 %
and 0.05 m/s), and the speed profile on a 1 m grid over the patch
(`compute_speed_profile`, mean method), drawn to PNG when asked. Exits 1
when PedPy refuses the file or the speeds disagree.
"""

import json
import pathlib
import sys

import pedpy


def main() -> int:
    report_path, traj_path = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    png = pathlib.Path(sys.argv[3]) if len(sys.argv) > 3 else None
    report = json.loads(report_path.read_text())
    # The patch document the report names (its side length).
    size = float(json.loads(pathlib.Path(report["patch"]).read_text())["size"])
    traj = pedpy.load_trajectory(trajectory_file=traj_path)
    speed = pedpy.compute_individual_speed(
        traj_data=traj,
        frame_step=max(1, round(0.1 * traj.frame_rate)),
        speed_calculation=pedpy.SpeedCalculation.BORDER_SINGLE_SIDED,
    )
    ours = report["metrics"]["realism"]["crowd"]["speed"]["p50"]
    theirs = float(speed.speed.median())
    area = pedpy.WalkableArea([(0, 0), (size, 0), (size, size), (0, size)])
    data = traj.data.merge(speed, on=["id", "frame"])
    profiles = pedpy.compute_speed_profile(
        data=data, walkable_area=area, grid_size=1.0, speed_method=pedpy.SpeedMethod.MEAN
    )
    walked = [p for p in profiles if (p == p).any()]
    print(
        f"{traj_path}: PedPy read {traj.data.id.nunique()} walkers, {len(traj.data)} rows at "
        f"{traj.frame_rate} fps; speed median {theirs:.3f} m/s (the report: {ours:.3f}); "
        f"speed profile over {len(profiles)} frames, {len(walked)} with walkers"
    )
    if png is not None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import numpy as np

        import warnings

        with warnings.catch_warnings():
            # Cells no walker crossed stay empty (NaN).
            warnings.simplefilter("ignore", category=RuntimeWarning)
            mean = np.nanmean(np.stack(walked), axis=0)
        fig, ax = plt.subplots(figsize=(5, 4.4))
        # PedPy's grid rows run from the top (largest y) down.
        im = ax.imshow(mean, origin="upper", extent=(0, size, 0, size), cmap="viridis")
        fig.colorbar(im, ax=ax, label="mean speed [m/s]")
        ax.set_title(f"{traj_path.stem}: speed profile (PedPy)")
        ax.set_xlabel("x [m]")
        ax.set_ylabel("y [m]")
        fig.savefig(png, dpi=100, bbox_inches="tight")
    if abs(theirs - ours) > max(0.05, 0.1 * ours):
        print(f"{traj_path}: PedPy's speed median {theirs:.3f} m/s is not the report's {ours:.3f} m/s", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
