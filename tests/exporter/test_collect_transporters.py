"""Links between nodes: one status series per link, counters, per-version details."""

from __future__ import annotations

import pytest
from fake_context import collect
from helpers import series, val
from ndbinfo_exporter import schema

LINK = {"node_id": 1, "remote_node_id": 2}


@pytest.mark.parametrize("code,text", schema.TRANSPORTER_STATUS)
def test_status_is_the_kernels_code_in_one_series_per_link(code: int, text: str) -> None:
    ss = collect("transporters", {"transporters": [{**LINK, "status": text,
                                                    "bytes_sent": 10}]})
    assert val(ss, "ndb_transporter_status_code", **LINK) == code
    # never a label of the byte counters: a reconnect must not start new series
    assert [lbl for lbl, _ in series(ss, "ndb_transporter_sent_bytes_total")] == [
        {"node_id": "1", "remote_node_id": "2"}]


def test_counters_and_a_nodes_own_slot_is_not_a_link() -> None:
    rows = [{**LINK, "status": "CONNECTED", "bytes_sent": 5, "bytes_received": 6,
             "connect_count": 3, "overloaded": 1, "overload_count": 4, "slowdown": 0,
             "slowdown_count": 2},
            # 7.x lists the node's own slot, DISCONNECTED with address "-"
            {"node_id": 1, "remote_node_id": 1, "status": "DISCONNECTED",
             "remote_address": "-"}]
    ss = collect("transporters", {"transporters": rows}, version="7.6")
    assert val(ss, "ndb_transporter_received_bytes_total", **LINK) == 6
    assert val(ss, "ndb_transporter_connects_total", **LINK) == 3
    assert val(ss, "ndb_transporter_overloaded", **LINK) == 1
    assert val(ss, "ndb_transporter_overloads_total", **LINK) == 4
    assert val(ss, "ndb_transporter_slowdowns_total", **LINK) == 2
    assert {lbl["remote_node_id"] for lbl, _ in series(ss, "ndb_transporter_status_code")} \
        == {"2"}


def test_an_unknown_status_text_is_no_sample() -> None:
    ss = collect("transporters", {"transporters": [{**LINK, "status": "WEIRD",
                                                    "bytes_sent": 1}]})
    assert val(ss, "ndb_transporter_status_code", **LINK) is None
    assert val(ss, "ndb_transporter_sent_bytes_total", **LINK) == 1


def test_details_read_only_the_columns_the_version_has() -> None:
    row = {**LINK, "trp_id": 5, "encrypted": 1, "sendbuffer_used_bytes": 100,
           "sendbuffer_alloc_bytes": 400}
    at = {**LINK, "trp_id": 5}
    ss = collect("transporter_details", {"transporter_details": [row]}, version="8.4")
    assert val(ss, "ndb_transporter_encrypted", **at) == 1
    assert val(ss, "ndb_transporter_send_buffer_used_bytes", **at) == 100
    assert val(ss, "ndb_transporter_send_buffer_allocated_bytes", **at) == 400
    assert not series(ss, "ndb_transporter_last_receive_age_seconds")
    # 9.x adds last_recv, in microseconds
    ss = collect("transporter_details",
                 {"transporter_details": [{**row, "last_recv": 2_500_000}]}, version="9.x")
    assert val(ss, "ndb_transporter_last_receive_age_seconds", **at) == pytest.approx(2.5)
