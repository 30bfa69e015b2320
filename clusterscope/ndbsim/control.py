"""Driving a running model from another process: queue a command, wait for its answer."""

from __future__ import annotations

import json
import time
from pathlib import Path

from clusterscope.ndbsim.store import SIM_DB, connect


class ControlError(RuntimeError):
    pass


def send(sock: str | Path, cmd: dict, timeout: float = 15.0) -> dict:
    conn = connect(sock)
    try:
        with conn.cursor() as cur:
            cur.execute(f"INSERT INTO {SIM_DB}.commands (cmd, created) VALUES (%s, %s)",
                        (json.dumps(cmd), time.time()))
            cid = cur.lastrowid
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                cur.execute(f"SELECT ok, result FROM {SIM_DB}.commands WHERE id=%s AND done"
                            " IS NOT NULL", (cid,))
                row = cur.fetchone()
                if row:
                    result = json.loads(row[1])
                    if not row[0]:
                        raise ControlError(result.get("error", "the model refused"))
                    return result
                time.sleep(0.2)
            cur.execute(f"DELETE FROM {SIM_DB}.commands WHERE id=%s AND done IS NULL", (cid,))
    finally:
        conn.close()
    raise ControlError(f"the NDB model did not answer within {timeout:.0f} s (is ndb-model"
                       " running? see `clusterscope lab status`)")


def state(sock: str | Path) -> dict:
    conn = connect(sock)
    try:
        with conn.cursor() as cur:
            cur.execute(f"SELECT v, updated FROM {SIM_DB}.state WHERE k='model'")
            row = cur.fetchone()
    finally:
        conn.close()
    if not row:
        raise ControlError("the NDB model has not reported yet")
    out = json.loads(row[0])
    out["age_secs"] = round(time.time() - row[1], 1)
    return out


def restart_record(sock: str | Path, restart_id: int) -> dict:
    conn = connect(sock)
    try:
        with conn.cursor(dictionary_cursor()) as cur:
            cur.execute(f"SELECT * FROM {SIM_DB}.restarts WHERE restart_id=%s", (restart_id,))
            rec = cur.fetchone() or {}
            cur.execute(f"SELECT status_int, status, cluster_secs FROM {SIM_DB}.restart_log"
                        " WHERE restart_id=%s ORDER BY id", (restart_id,))
            rec["statuses"] = [r["status_int"] for r in cur.fetchall()]
    finally:
        conn.close()
    return rec


def dictionary_cursor():
    import pymysql.cursors
    return pymysql.cursors.DictCursor


def wait_restart(sock: str | Path, restart_id: int, timeout: float) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        rec = restart_record(sock, restart_id)
        if rec.get("finished"):
            return rec
        time.sleep(0.25)
    raise ControlError(f"restart {restart_id} did not complete within {timeout:.0f} s"
                       " (a restart-stuck fault holds it? `clusterscope lab ndb status`)")
