"""The workload views of the ndbinfo catalogue (schema.py holds the rest): memory and lock
counters per fragment, the transaction and lock record pools, the TC and PGMAN latency
histograms and the disk page buffer. Sources as in schema.py, cited next to each fact.
"""

from __future__ import annotations

from ndbinfo_exporter import decodes
from ndbinfo_exporter.schema_model import BIT_OP, B, Column, I, S, View, enum, plain

# cluster_transactions / cluster_locks compute these from 32-bit kernel columns; a real
# SQL node's DESC shows them so (mysql/mysql-server mysql-test/suite/ndb/r/ndbinfo.result
# @01077b45b175, `desc cluster_transactions`): transid0 + (transid1 << 32) -> bigint(22)
# unsigned, apiref & 65535 / apiref >> 16 -> bigint(21) unsigned (BIT_OP)
TRANSID = "BIGINT(22) UNSIGNED"
TRANSID_SQL = "{t}.transid0 + ({t}.transid1 << 32)"


_TC_TT = ("scans scan_errors scan_fragments scan_fragment_errors transactions"
          " transaction_errors read_key_ops write_key_ops index_key_ops key_op_errors")
_FRAG_MEM = (("node_id", I), ("block_instance", I), ("table_id", I), ("fragment_num", I),
             ("rows", B), ("fixed_elem_alloc_bytes", B), ("fixed_elem_free_bytes", B),
             ("fixed_elem_count", B), ("fixed_elem_size_bytes", I),
             ("var_elem_alloc_bytes", B), ("var_elem_free_bytes", B), ("var_elem_count", B),
             ("tuple_l2pmap_alloc_bytes", B), ("hash_index_l2pmap_alloc_bytes", B),
             ("hash_index_alloc_bytes", B))
_FRAG_LOCK_COUNTS = ("ex_req", "ex_imm_ok", "ex_wait_ok", "ex_wait_fail", "sh_req",
                     "sh_imm_ok", "sh_wait_ok", "sh_wait_fail")
_ACC_OPS = (("node_id", I), ("block_instance", I), ("tableid", I), ("fragmentid", I),
            ("rowid", B), ("transid0", I), ("transid1", I), ("acc_op_id", I), ("op_flags", I),
            ("prev_serial_op_id", I), ("next_serial_op_id", I), ("prev_parallel_op_id", I),
            ("next_parallel_op_id", I), ("duration_millis", I), ("user_ptr", I))


def _flag_case(flag: int, zero: str, other: str) -> str:
    """cluster_locks' decode of one op_flags bit (NOT NULL, as a CASE with an ELSE)."""
    return (f"IFNULL(CASE (`ndb$acc_operations`.op_flags & {flag:#x}) WHEN 0 THEN '{zero}'"
            f" ELSE '{other}' END, '{other}')")


WORKLOAD_VIEWS: tuple[View, ...] = (
    # Memory per fragment (DBTUP/DBACC, per LDM instance): the base is in the 7.4-era
    # catalogue (id 17, `frag_mem_use`); the view as in 7.6 ndbinfo_sql.cpp @56954e7 and 8.0
    # ha_ndbinfo_sql.cc @087b0bb (identical): joined to the dictionary for names, types <= 6
    # only (the ids of triggers and files collide with table ids). Bytes and element counts.
    View("memory_per_fragment", "ndb$frag_mem_use", "7.5.0", (
        Column("fq_name", S, expr="name.fq_name"),
        Column("parent_fq_name", S, expr="parent_name.fq_name"),
        Column("type", S, expr="types.type_name"),
        Column("table_id", I, expr="space.table_id"),
        Column("node_id", I, expr="space.node_id"),
        Column("block_instance", I, expr="space.block_instance"),
        Column("fragment_num", I, expr="space.fragment_num"),
        Column("fixed_elem_alloc_bytes", B, "bytes", expr="space.fixed_elem_alloc_bytes"),
        Column("fixed_elem_free_bytes", B, "bytes", expr="space.fixed_elem_free_bytes"),
        Column("fixed_elem_size_bytes", I, "bytes", expr="space.fixed_elem_size_bytes"),
        Column("fixed_elem_count", B, expr="space.fixed_elem_count"),
        # FLOOR of a BIGINT / INT division: MariaDB's DESC (measured, tests/test_ndbsim_lab.py);
        # no recorded MySQL DESC of this view (the exporter does not read the column)
        Column("fixed_elem_free_count", "DECIMAL(20,0) UNSIGNED",
               expr="FLOOR(space.fixed_elem_free_bytes / space.fixed_elem_size_bytes)"),
        Column("var_elem_alloc_bytes", B, "bytes", expr="space.var_elem_alloc_bytes"),
        Column("var_elem_free_bytes", B, "bytes", expr="space.var_elem_free_bytes"),
        Column("var_elem_count", B, expr="space.var_elem_count"),
        Column("hash_index_alloc_bytes", B, "bytes", expr="space.hash_index_alloc_bytes")),
        base_columns=_FRAG_MEM,
        tail="FROM {db}.`ndb$frag_mem_use` AS space JOIN {db}.`ndb$dict_obj_info` AS name"
             " ON name.id = space.table_id AND name.type <= 6"
             " JOIN {db}.`ndb$dict_obj_types` AS types ON name.type = types.type_id"
             " LEFT JOIN {db}.`ndb$dict_obj_info` AS parent_name"
             " ON name.parent_obj_id = parent_name.id"
             " AND name.parent_obj_type = parent_name.type",
        help="one row per fragment replica per LDM instance: aggregate before exporting"),
    # Open transactions per TC instance (kernel table `transactions`, id 13, in the 7.1
    # catalogue; the view's first release is not confirmed, 7.2-era). View and types as the
    # recorded 7.6-era DESC (mysql-test/suite/ndb/r/ndbinfo.result @01077b45b175) and the
    # 7.6/8.0 view definitions. inactive_seconds is the TC's timer: seconds since the
    # transaction last did something ((ctcTimer - apiTimer) / 100, Dbtc::ndbinfo_write_trans),
    # not its age, which no ndbinfo table has.
    View("cluster_transactions", "ndb$transactions", "7.1.0", (
        Column("node_id", I, expr="t.node_id"),
        Column("block_instance", I, expr="t.block_instance"),
        Column("transid", TRANSID, expr=TRANSID_SQL.format(t="t")),
        Column("state", "VARCHAR(256)", expr="s.state_friendly_name"),
        Column("count_operations", I, expr="t.c_ops"),
        Column("outstanding_operations", I, expr="t.outstanding"),
        Column("inactive_seconds", I, "seconds", expr="t.timer"),
        Column("client_node_id", BIT_OP, expr="(t.apiref & 65535)"),
        Column("client_block_ref", BIT_OP, expr="(t.apiref >> 16)")),
        base_columns=(("node_id", I), ("block_instance", I), ("objid", I), ("apiref", I),
                      ("transid0", I), ("transid1", I), ("state", I), ("flags", I),
                      ("c_ops", I), ("outstanding", I), ("timer", I)),
        tail="FROM {db}.`ndb$transactions` t LEFT JOIN {db}.`ndb$dbtc_apiconnect_state` s"
             " ON s.state_int_value = t.state",
        help="one row per transaction a TC instance runs; aggregate before exporting"),
    # Row locks (kernel table `acc_operations`, id 30, after cpustat's 7.5.2 tables and
    # before table_distribution_status's 7.5.4 ones in ndb$tables (ndbinfo.result); the 7.5
    # manual: "The server_locks table was added in NDB 7.5.3", its twin). View as in 7.6
    # ndbinfo_sql.cpp @56954e7 and 8.0 ha_ndbinfo_sql.cc @087b0bb.
    View("cluster_locks", "ndb$acc_operations", "7.5.3", (
        Column("node_id", I), Column("block_instance", I), Column("tableid", I),
        Column("fragmentid", I), Column("rowid", B),
        Column("transid", TRANSID, expr=TRANSID_SQL.format(t="`ndb$acc_operations`")),
        Column("mode", "VARCHAR(1)", expr=_flag_case(decodes.LOCK_EXCLUSIVE, "S", "X"),
               nullable=False),
        Column("state", "VARCHAR(1)", expr=_flag_case(decodes.LOCK_HOLDING, "W", "H"),
               nullable=False),
        Column("detail", "VARCHAR(1)", expr=_flag_case(decodes.LOCK_OWNER, "", "*"),
               nullable=False),
        enum("op", "(`ndb$acc_operations`.op_flags & 0xf)", decodes.LOCK_OP, "<unknown>"),
        Column("duration_millis", I, "milliseconds"),
        Column("lock_num", I, expr="acc_op_id"),
        Column("waiting_for", I, expr="IF(`ndb$acc_operations`.op_flags & 0xc0 = 0,"
                                      " `ndb$acc_operations`.prev_serial_op_id, NULL)")),
        base_columns=_ACC_OPS,
        help="one row per lock held or waited for; aggregate before exporting"),
    # Lock requests per fragment replica (kernel table frag_locks, DBACC per LDM instance):
    # cumulative since the fragment was created or the node started, the times in
    # milliseconds (mysql/mysql-server storage/ndb/src/common/debugger/NdbinfoTables.cpp
    # @966fd7f61ed3 FRAG_LOCKS; Dbacc::execDBINFO_SCANREQ writes Fragmentrec::m_lockStats,
    # storage/ndb/src/kernel/blocks/dbacc/DbaccMain.cpp @54feb0c1cfe0). "Added in NDB
    # 7.5.3" (7.5.3 release notes, WL#7656); view as in 7.6 ndbinfo_sql.cpp @01c56955477c
    # and 8.0 ha_ndbinfo_sql.cc (identical), joined to the dictionary like
    # memory_per_fragment. ex_/sh_wait_fail: requests aborted while waiting (the TC's
    # TransactionDeadlockDetectionTimeout, error 266, or the transaction's abort).
    View("locks_per_fragment", "ndb$frag_locks", "7.5.3", (
        Column("fq_name", S, expr="name.fq_name"),
        Column("parent_fq_name", S, expr="parent_name.fq_name"),
        Column("type", S, expr="types.type_name"),
        Column("table_id", I, expr="locks.table_id"),
        Column("node_id", I, expr="locks.node_id"),
        Column("block_instance", I, expr="locks.block_instance"),
        Column("fragment_num", I, expr="locks.fragment_num"),
        *[Column(c, B, expr=f"locks.{c}") for c in _FRAG_LOCK_COUNTS],
        Column("wait_ok_millis", B, "milliseconds", expr="locks.wait_ok_millis"),
        Column("wait_fail_millis", B, "milliseconds", expr="locks.wait_fail_millis")),
        base_columns=(("node_id", I), ("block_instance", I), ("table_id", I),
                      ("fragment_num", I), *((c, B) for c in _FRAG_LOCK_COUNTS),
                      ("wait_ok_millis", B), ("wait_fail_millis", B)),
        tail="FROM {db}.`ndb$frag_locks` AS locks JOIN {db}.`ndb$dict_obj_info` AS name"
             " ON name.id = locks.table_id AND name.type <= 6"
             " JOIN {db}.`ndb$dict_obj_types` AS types ON name.type = types.type_id"
             " LEFT JOIN {db}.`ndb$dict_obj_info` AS parent_name"
             " ON name.parent_obj_id = parent_name.id"
             " AND name.parent_obj_type = parent_name.type",
        help="one row per fragment replica per LDM instance: aggregate before exporting"),
    # Latency histograms of each TC instance per communicating node: kernel table id 22,
    # before config_values (23, "added in NDB 7.5.0") in ndb$tables (ndbinfo.result), and
    # absent from the 7.4 catalogue: 7.5.0. Counts per range (not cumulative); upper_bound
    # in microseconds (NdbinfoTables.cpp comments). SELECT * in every view version.
    View("tc_time_track_stats", "ndb$tc_time_track_stats", "7.5.0", (
        *plain("node_id block_number block_instance comm_node_id", I),
        Column("upper_bound", B, "microseconds"), *plain(_TC_TT, B))),
    # The disk page buffer (PGMAN, one instance per LDM thread plus one: manual, ndbinfo
    # diskstat): in the 7.1 catalogue; same 9 columns in 7.6 and 8.0 (explicit column list
    # in both view definitions). Cumulative counters.
    View("diskpagebuffer", "ndb$diskpagebuffer", "7.1.0", (
        *plain("node_id block_instance", I),
        *plain("pages_written pages_written_lcp pages_read log_waits"
                " page_requests_direct_return page_requests_wait_queue page_requests_wait_io",
                B))),
    # Disk data page latency histograms per PGMAN instance: "NDB 8.0.19" (MySQL 8.0 manual,
    # pgman_time_track_stats; absent from the 7.6 view definitions @56954e7). Counts per
    # range, upper_bound in microseconds (NdbinfoTables.cpp; the manual's "ms" is wrong).
    # block_number is NDBFS's, not PGMAN's: Pgman::execDBINFO_SCANREQ writes
    # `row.write_uint32(NDBFS)` (storage/ndb/src/kernel/blocks/pgman.cpp in
    # logicalclocks/rondb @0a07ff7f6184, the 8.0 PGMAN with time tracking). get_page counts
    # only the requests that waited ("Number of waits for get_page", NdbinfoTables.cpp).
    View("pgman_time_track_stats", "ndb$pgman_time_track_stats", "8.0.19", (
        *plain("node_id block_number block_instance", I),
        Column("upper_bound", I, "microseconds"),
        *plain("page_reads page_writes log_waits get_page", B))),
)
