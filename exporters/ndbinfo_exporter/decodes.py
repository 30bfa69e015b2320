"""What ndbinfo's numbers mean: the enum decodes the views apply (value -> text), the restart
states and phases, the kernel's block numbers and counter ids, lock flags, and the latency
histograms' bounds, each copied from the source named beside it."""

from __future__ import annotations

NODE_STATUS = ((0, "NOTHING"), (1, "CMVMI"), (2, "STARTING"), (3, "STARTED"),
               (4, "SINGLEUSER"), (5, "STOPPING_1"), (6, "STOPPING_2"), (7, "STOPPING_3"),
               (8, "STOPPING_4"))
# membership.arb_state (mysql-server storage/ndb/tools/ndbinfo_sql.cc, view `membership`)
ARB_STATE = ((0, "ARBIT_NULL"), (1, "ARBIT_INIT"), (2, "ARBIT_FIND"), (3, "ARBIT_PREP1"),
             (4, "ARBIT_PREP2"), (5, "ARBIT_START"), (6, "ARBIT_RUN"), (7, "ARBIT_CHOOSE"),
             (8, "ARBIT_CRASH"))
TRANSPORTER_STATUS = ((0, "CONNECTED"), (1, "CONNECTING"), (2, "DISCONNECTED"),
                      (3, "DISCONNECTING"))
TRANSPORTER_TYPE = ((1, "TCP"), (3, "SHM"))
NODE_TYPE = ((0, "NDB"), (1, "API"), (2, "MGM"))
LOG_TYPE_75 = ((0, "REDO"), (1, "DD-UNDO"))
LOG_TYPE = ((0, "REDO"), (1, "DD-UNDO"), (2, "BACKUP-DATA"), (3, "BACKUP-LOG"))
RESOURCE_NAME = ((0, "RESERVED"), (1, "TRANSACTION_MEMORY"), (2, "DISK_RECORDS"),
                 (3, "DATA_MEMORY"), (4, "JOBBUFFER"), (5, "FILE_BUFFERS"),
                 (6, "TRANSPORTER_BUFFERS"), (7, "DISK_PAGE_BUFFER"), (8, "QUERY_MEMORY"),
                 (9, "SCHEMA_TRANS_MEMORY"))
COUNTER_NAME = tuple(enumerate((
    "ATTRINFO", "TRANSACTIONS", "COMMITS", "READS", "SIMPLE_READS", "WRITES", "ABORTS",
    "TABLE_SCANS", "RANGE_SCANS", "OPERATIONS", "READS_RECEIVED", "LOCAL_READS_SENT",
    "REMOTE_READS_SENT", "READS_NOT_FOUND", "TABLE_SCANS_RECEIVED", "LOCAL_TABLE_SCANS_SENT",
    "RANGE_SCANS_RECEIVED", "LOCAL_RANGE_SCANS_SENT", "REMOTE_RANGE_SCANS_SENT",
    "SCAN_BATCHES_RETURNED", "SCAN_ROWS_RETURNED", "PRUNED_RANGE_SCANS_RECEIVED",
    "CONST_PRUNED_RANGE_SCANS_RECEIVED", "LOCAL_READS", "LOCAL_WRITES", "LQHKEY_OVERLOAD",
    "LQHKEY_OVERLOAD_TC", "LQHKEY_OVERLOAD_READER", "LQHKEY_OVERLOAD_NODE_PEER",
    "LQHKEY_OVERLOAD_SUBSCRIBER", "LQHSCAN_SLOWDOWNS"), start=1))
# which block owns which counter (kernel row estimate: 11 per TC, 7 per LQH, 13 per SPJ)
COUNTER_BLOCK = {**{i: "DBTC" for i in (*range(1, 10), 24, 25)},
                 **{i: "DBLQH" for i in (10, *range(26, 32))},
                 **{i: "DBSPJ" for i in range(11, 24)}}
# kernel block numbers (mysql/mysql-server storage/ndb/include/kernel/BlockNumbers.h
# @e45ae218c0dd): what ndb$blocks maps to names for counters, threadblocks and the histograms
BLOCK_NUMBER = {"BACKUP": 244, "DBTC": 245, "DBDIH": 246, "DBLQH": 247, "DBACC": 248,
                "DBTUP": 249, "DBDICT": 250, "NDBCNTR": 251, "QMGR": 252, "NDBFS": 253,
                "CMVMI": 254, "TRIX": 255, "DBUTIL": 256, "SUMA": 257, "DBTUX": 258,
                "TSMAN": 259, "LGMAN": 260, "PGMAN": 261, "RESTORE": 262, "DBINFO": 263,
                "DBSPJ": 264, "THRMAN": 265, "TRPMAN": 266}
COPY_STATUS_OLD = ((0, "IDLE"), (1, "SR_PHASE1_READ_PAGES"), (2, "SR_PHASE2_READ_TABLE"),
                   (3, "SR_PHASE3_COPY_TABLE"), (4, "REMOVE_NODE"), (5, "LCP_READ_TABLE"),
                   (6, "COPY_TAB_REQ"), (7, "COPY_NODE_STATE"), (8, "ADD_TABLE_MASTER"),
                   (9, "ADD_TABLE_SLAVE"), (10, "INVALIDATE_NODE_LCP"), (11, "ALTER_TABLE"),
                   (12, "COPY_TO_SAVE"), (13, "GET_TABINFO"))
COPY_STATUS = tuple((k, {"ADD_TABLE_MASTER": "ADD_TABLE_COORDINATOR",
                         "ADD_TABLE_SLAVE": "ADD_TABLE_PARTICIPANT"}.get(v, v))
                    for k, v in COPY_STATUS_OLD)
UPDATE_STATUS_OLD = ((0, "IDLE"), (1, "LOCAL_CHECKPOINT"), (2, "LOCAL_CHECKPOINT_QUEUED"),
                     (3, "REMOVE_NODE"), (4, "COPY_TAB_REQ"), (5, "ADD_TABLE_MASTER"),
                     (6, "ADD_TABLE_SLAVE"), (7, "INVALIDATE_NODE_LCP"), (8, "CALLBACK"))
UPDATE_STATUS = tuple((k, {"ADD_TABLE_MASTER": "ADD_TABLE_COORDINATOR",
                           "ADD_TABLE_SLAVE": "ADD_TABLE_PARTICIPANT"}.get(v, v))
                      for k, v in UPDATE_STATUS_OLD)
# sic: every view version spells status 2 `wRITING_TO_FILE`
LCP_STATUS = ((1, "ACTIVE"), (2, "wRITING_TO_FILE"), (3, "COMPLETED"))
TAB_STATUS = ((0, "IDLE"), (1, "ACTIVE"), (2, "CREATING"), (3, "DROPPING"))
TAB_STORAGE = ((0, "NOLOGGING"), (1, "NORMAL"), (2, "TEMPORARY"))

# restart_info.node_restart_status_int is the data node kernel's NodeRecoveryStatus, written
# raw (mysql/mysql-server storage/ndb/src/kernel/blocks/dbdih/Dbdih.hpp, enum
# NodeRecoveryStatus; Dbdih::fill_row_with_node_restart_status in DbdihMain.cpp:
# `row.write_uint32(Uint32(nodePtr.p->nodeRecoveryStatus))`). Not the manual's 0-21 table,
# which is wrong: there 12 is "completed", in the kernel 12 is LOCAL_RECOVERY_STARTED.
RESTART_STATUS_NAME: dict[int, str] = dict(enumerate((
    "NOT_DEFINED_IN_CLUSTER", "NODE_NOT_RESTARTED_YET", "NODE_FAILED", "NODE_FAILURE_COMPLETED",
    "ALLOCATED_NODE_ID", "INCLUDED_IN_HB_PROTOCOL", "NDBCNTR_START_WAIT", "NDBCNTR_STARTED",
    "START_PERMITTED", "WAIT_LCP_TO_COPY_DICT", "COPY_DICT_TO_STARTING_NODE",
    "INCLUDE_NODE_IN_LCP_AND_GCP", "LOCAL_RECOVERY_STARTED", "RESTORE_FRAG_COMPLETED",
    "UNDO_DD_COMPLETED", "EXECUTE_REDO_LOG_COMPLETED", "COPY_FRAGMENTS_STARTED",
    "WAIT_LCP_FOR_RESTART", "WAIT_SUMA_HANDOVER", "RESTART_COMPLETED", "NODE_GETTING_PERMIT",
    "NODE_GETTING_INCLUDED", "NODE_GETTING_SYNCHED", "NODE_IN_LCP_WAIT_STATE", "NODE_ACTIVE")))
# node_restart_status: Dbdih::get_status_str (DbdihMain.cpp, AKJUS/mysql-server mirror of
# trunk @53c1e76a4336); a state names what is *under way* (13 = restore done, undo ongoing)
RESTART_STATUS: dict[int, str] = {
    1: "Initial state", 2: "Node failed, fail handling ongoing",
    3: "Node failure handling complete", 4: "Allocated node id",
    5: "Included in heartbeat protocol", 6: "Wait for NDBCNTR master permit",
    7: "NDBCNTR master permitted us", 8: "All nodes permitted us",
    9: "Wait for LCP complete to copy meta data", 10: "Copy meta data to start node",
    11: "Include node in LCP/GCP protocols", 12: "Restore fragments ongoing",
    13: "Undo Disk data ongoing", 14: "Execute REDO logs ongoing", 15: "Build indexes ongoing",
    16: "Synchronize start node with live nodes", 17: "Wait LCP to ensure durability",
    18: "Wait handover of subscriptions", 19: "Restart completed",
    20: "All nodes permitted us", 21: "Include node in LCP/GCP protocols",
    22: "Synchronize start node with live nodes", 23: "Wait LCP to ensure durability",
    24: "Restart completed"}
# a normal node restart as the DIH master reports it (failure handling, then 4 .. 19); the
# states 20-24 are what a node that was not master during the restart kept, reported once
# it became master (a master takeover)
RESTART_ORDER_MASTER = (2, 3, *range(4, 20))
RESTART_ORDER_BEFORE_MASTER = (20, 21, 22, 23, 24)
RESTART_COMPLETED = frozenset({19, 24})
RESTART_FAILURE = frozenset({2, 3})  # the node is down: failure handling
# never reported: Dbdih's execDBINFO_SCANREQ skips NODE_NOT_RESTARTED_YET and
# NOT_DEFINED_IN_CLUSTER (no restart information)
RESTART_NO_INFO = frozenset({0, 1})
# status 24 rows fill only these phases (Dbdih::handle_before_master) besides the total
RESTART_PHASES_BEFORE_MASTER = ("to_complete_node_failure", "to_get_start_permitted",
                                "to_include_node", "for_local_recovery",
                                "to_synchronize_starting_node")

# secs_* columns in view order; LOCAL_RECOVERY_PARTS sum to secs_for_local_recovery and the
# top-level phases (all but those parts) sum to total_restart_secs
RESTART_PHASES = (
    "to_complete_node_failure", "to_allocate_node_id", "to_include_in_heartbeat_protocol",
    "until_wait_for_ndbcntr_master", "wait_for_ndbcntr_master", "to_get_start_permitted",
    "to_wait_for_lcp_for_copy_meta_data", "to_copy_meta_data", "to_include_node",
    "starting_node_to_request_local_recovery", "for_local_recovery", "restore_fragments",
    "undo_disk_data", "exec_redo_log", "index_rebuild", "to_synchronize_starting_node",
    "wait_lcp_for_restart", "wait_subscription_handover")
LOCAL_RECOVERY_PARTS = ("restore_fragments", "undo_disk_data", "exec_redo_log",
                        "index_rebuild")
TOP_LEVEL_PHASES = tuple(p for p in RESTART_PHASES if p not in LOCAL_RECOVERY_PARTS)


# Dbtc's ApiConnectRecord states (mysql/mysql-server storage/ndb/src/kernel/blocks/dbtc/
# Dbtc.hpp, enum ConnectionState) with the friendly names the SQL node's lookup table
# ndb$dbtc_apiconnect_state serves (storage/ndb/src/kernel/blocks/dbtc/DbtcStateDesc.cpp,
# g_dbtc_apiconnect_state_desc): (value, state_name, friendly name, description). The
# TRANSACTIONS scan skips CS_CONNECTED, CS_DISCONNECTED and CS_RESTART and reports an
# aborting record with no abort in progress as connected (Dbtc::ndbinfo_write_trans,
# DbtcMain.cpp), so only the others ever appear in cluster_transactions.
DBTC_APICONNECT_STATE = (
    (0, "CS_CONNECTED", "Connected", "An allocated idle transaction object"),
    (1, "CS_DISCONNECTED", "Disconnected", "An unallocated connection object"),
    (2, "CS_STARTED", "Started", "A started transaction"),
    (3, "CS_RECEIVING", "Receiving", "A transaction receiving operations"),
    (7, "CS_RESTART", "", ""),
    (8, "CS_ABORTING", "Aborting", "A transaction aborting"),
    (9, "CS_COMPLETING", "Completing", "A transaction completing"),
    (10, "CS_COMPLETE_SENT", "Completing", "A transaction completing"),
    (11, "CS_PREPARE_TO_COMMIT", "", ""),
    (12, "CS_COMMIT_SENT", "Committing", "A transaction committing"),
    (13, "CS_START_COMMITTING", "", ""),
    (14, "CS_COMMITTING", "Committing", "A transaction committing"),
    (15, "CS_REC_COMMITTING", "", ""),
    (16, "CS_WAIT_ABORT_CONF", "Aborting", ""),
    (17, "CS_WAIT_COMPLETE_CONF", "Completing", ""),
    (18, "CS_WAIT_COMMIT_CONF", "Committing", ""),
    (19, "CS_FAIL_ABORTING", "TakeOverAborting", ""),
    (20, "CS_FAIL_ABORTED", "TakeOverAborting", ""),
    (21, "CS_FAIL_PREPARED", "", ""),
    (22, "CS_FAIL_COMMITTING", "TakeOverCommitting", ""),
    (23, "CS_FAIL_COMMITTED", "TakeOverCommitting", ""),
    (24, "CS_FAIL_COMPLETED", "TakeOverCompleting", ""),
    (25, "CS_START_SCAN", "Scanning", ""),
    (26, "CS_SEND_FIRE_TRIG_REQ", "Precomitting", ""),
    (27, "CS_WAIT_FIRE_TRIG_REQ", "Precomitting", ""))
# ndb$acc_operations.op_flags, as the cluster_locks view decodes it (ha_ndbinfo_sql.cc,
# "op_flags meanings come from DbaccMain.cpp"): 0x10 exclusive, 0x80 holding (else
# waiting), 0x40 the lock's owner, the low 4 bits the operation
LOCK_EXCLUSIVE, LOCK_OWNER, LOCK_HOLDING = 0x10, 0x40, 0x80
LOCK_OP = ((0, "READ"), (1, "UPDATE"), (2, "INSERT"), (3, "DELETE"), (5, "READ"),
           (6, "REFRESH"), (7, "UNLOCK"), (8, "SCAN"))
# dict_obj_types (DictTabInfo's object types, as the SQL node's lookup names them); the
# memory_per_fragment view keeps types <= 6, tables and indexes
DICT_OBJ_TYPE = ((1, "System table"), (2, "User table"), (3, "Unique hash index"),
                 (4, "Hash index"), (5, "Unique ordered index"), (6, "Ordered index"))
# the histogram views: 32 ranges per TC (Dbtc.hpp TIME_TRACK_HISTOGRAM_RANGES), from 50
# microseconds, each 1.5 times the previous in integer arithmetic (val *= 3; val /= 2:
# Dbtc::time_track_init_histogram_limits, DbtcMain.cpp); a latency above the last bound is
# counted in the last range (time_track_calculate_histogram_position's search stops there)
TC_TIME_TRACK_RANGES = 32


def tc_time_track_bounds() -> list[int]:
    out, val = [], 50
    for _ in range(TC_TIME_TRACK_RANGES):
        out.append(val)
        val = val * 3 // 2
    return out


# 20 ranges per PGMAN instance: 0, 16, then doubling, the last one Uint64(~0) ("everything
# else"; Pgman's constructor, storage/ndb/src/kernel/blocks/pgman.cpp), written into an
# INT UNSIGNED column (NdbinfoTables.cpp PGMAN_TIME_TRACK_STATS: upper_bound Number)
PGMAN_TIME_TRACK_RANGES = 20


def pgman_time_track_bounds() -> list[int]:
    out = [0, 16]
    while len(out) < PGMAN_TIME_TRACK_RANGES - 1:
        out.append(2 * out[-1])
    return [*out, 2**32 - 1]
