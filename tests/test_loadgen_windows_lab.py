"""The loadgen's windows against the lab's real Galera: a state that comes and goes inside
a window voids it, and every variant of a comparison sees the same table size."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
import yaml
from clusterscope_loadgen import config
from clusterscope_loadgen.runner import Runner
from clusterscope_loadgen.target import Target

from clusterscope.lab import galera_nodes as gn
from clusterscope.lab import mariadb
from clusterscope.lab.core import Lab

pytestmark = pytest.mark.lab


def _targets(lab) -> list[Target]:
    return [Target.from_cnf(lab.service(f"galera-node{n}")["client_config"]) for n in (1, 2)]


def _config(tmp_path: Path, table_rows: int, max_rows: int) -> Path:
    data = yaml.safe_load(config.DEFAULT_CONFIG.read_text())
    data["experiments"]["fk"].update(table_rows=table_rows, max_rows=max_rows)
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def _desync(lab: Lab, n: int, after: float, hold: float, seen: list[str]) -> None:
    """Node n leaves Synced for `hold` seconds (wsrep_desync: Donor/Desynced, as a state
    transfer's donor is), `after` seconds from now, and comes back."""
    time.sleep(after)
    conn = mariadb.socket_connect(gn.base(lab, n) / "mysqld.sock")
    try:
        with conn.cursor() as cur:
            cur.execute("SET GLOBAL wsrep_desync = ON")
            seen.append(gn.status_vars(lab, n)["wsrep_local_state_comment"])
            time.sleep(hold)
            cur.execute("SET GLOBAL wsrep_desync = OFF")
    finally:
        conn.close()
    gn.wait_synced(lab, n)


def test_a_state_that_comes_and_goes_inside_a_window_voids_it(galera_lab,
                                                               tmp_path: Path) -> None:
    """The node is Synced when the window starts and when it ends, Donor/Desynced for 2 s
    in between: snapshots at the ends alone call that window clean; the polls while it
    runs see the state, and the window is invalid. The next window is clean again."""
    lab = Lab(galera_lab.root)
    runner = Runner(config.experiment("fk", _config(tmp_path, 2000, 60000)), "galera",
                    _targets(galera_lab), only=["fk2"], slot=1.0, washout=0.25,
                    out=lambda s: None)
    runner.prepare()
    group = runner.variants
    seen: list[str] = []
    poke = threading.Thread(target=_desync, args=(lab, 1, 5.0, 2.0, seen))
    poke.start()
    try:
        wins = runner.run_group(group, 1, 12.0, design="timesliced")
    finally:
        poke.join()
    assert seen == ["Donor/Desynced"]
    node = f"{runner.primary.host}:{runner.primary.port}"
    for w in wins:
        assert not w.valid
        assert w.reasons == [f"node {node} not Synced (Donor/Desynced) during the window"]
        assert w.polls >= 8
    again = runner.run_group(group, 2, 4.0, design="timesliced")
    assert all(w.valid for w in again), [w.reasons for w in again]


def test_every_variant_of_a_comparison_sees_the_same_table_size(galera_lab,
                                                                tmp_path: Path) -> None:
    """Pre-filled to 2,000 identical rows, trimmed back together before a window once any
    table reached 4,000: each window records its tables' rows, and a variant's table and
    its baseline's stay alike (a table written by two groups, as users_posts once was,
    grew twice as fast as its comparison's other table)."""
    runner = Runner(config.experiment("fk", _config(tmp_path, 2000, 4000)), "galera",
                    _targets(galera_lab), window=4, slot=1.0, washout=0.25, warmup=0,
                    out=lambda s: None)
    # rounds until a trim and one round after it: a loaded machine writes slower, so the
    # number of rounds that fills a table to 4,000 is not fixed
    result = runner.run(rounds=5)
    checks, windows = list(result["verification"]), list(result["windows"])
    for _ in range(10):
        if result["trims"] >= 1 and any(v.get("before_truncate") for v in checks):
            break
        result = runner.run(rounds=2)
        checks += result["verification"]
        windows += result["windows"]
    assert result["trims"] >= 1 and result["table_rows"] == 2000, result["trims"]
    assert any(v.get("before_truncate") for v in checks)
    assert all(v["ok"] is True for v in checks), checks
    pairs = {"fk2": ("users_posts", "users_posts_fk"),
             "fk1_2w": ("users_posts_2w", "users_posts_fk1"),
             "fk2_2w": ("users_posts_2w", "users_posts_fk_2w")}
    windows = [w for w in windows if not w["warmup"]]
    assert windows
    for w in windows:
        # trimmed before any window that would start at max_rows, however fast the
        # machine writes
        assert all(2000 <= n < 4000 for n in w["rows"].values()), w["rows"]
        if w["variant"] in pairs:
            base, mine = (w["rows"][t] for t in pairs[w["variant"]])
            # they grow in turn, each at its own rate (the FK costs a few percent, the
            # lead-in before slot 0 runs every variant): apart by a small part of what
            # they grew since the trim
            grown = max(base, mine) - 2000
            assert abs(base - mine) <= 0.25 * grown + 100, (w["variant"], w["rows"])
