"""Every table the experiments use, per engine: the one place that knows the DDL.

`galera` and `innodb` share InnoDB DDL; `ndb` gets ENGINE=NDBCLUSTER with the NDB table
options (READ_BACKUP, PARTITION_BALANCE) in the table comment. NDB DDL cannot run in this
lab (the NDB simulator serves ndbinfo views only, no NDB engine): each NDB form below is
the one MySQL's reference manual and mysql-server's own NDB test suite use, cited where it
is written, and tests/test_loadgen_ndb.py checks every NDB statement against those forms
(each clause kind with the suite's file and commit that uses it, and the manual's grammar).
"""

from __future__ import annotations

ENGINES = ("galera", "innodb", "ndb")
# COMMENT="NDB_TABLE=..." values (MySQL 8.0 Reference Manual, 13.1.20.11 "Setting NDB_TABLE
# Options": PARTITION_BALANCE={FOR_RP_BY_NODE | FOR_RA_BY_NODE | FOR_RP_BY_LDM |
# FOR_RA_BY_LDM | FOR_RA_BY_LDM_X_2 | FOR_RA_BY_LDM_X_3 | FOR_RA_BY_LDM_X_4})
PARTITION_BALANCES = ("FOR_RP_BY_NODE", "FOR_RA_BY_NODE", "FOR_RP_BY_LDM", "FOR_RA_BY_LDM",
                      "FOR_RA_BY_LDM_X_2", "FOR_RA_BY_LDM_X_3", "FOR_RA_BY_LDM_X_4")


class DDLError(ValueError):
    """An experiment/engine combination has no DDL."""


def _engine_clause(engine: str, ndb_options: dict[str, object] | None = None) -> str:
    if engine not in ENGINES:
        raise DDLError(f"unknown engine {engine!r} (known: {', '.join(ENGINES)})")
    if engine != "ndb":
        return "ENGINE=InnoDB"
    # ENGINE=NDBCLUSTER (mysql/mysql-server mysql-test/suite/ndb/t/ndb_basic.test: "test
    # create with the keyword engine=NDBCLUSTER")
    clause = "ENGINE=NDBCLUSTER"
    if ndb_options:
        # COMMENT="NDB_TABLE=name=value[,name=value]", no spaces inside the quotes (manual
        # 13.1.20.11; ndb_alter_table_comment.test: CREATE TABLE t30 (...) ENGINE=ndb
        # COMMENT="NDB_TABLE=NOLOGGING=1,READ_BACKUP=0")
        opts = ",".join(f"{k}={v}" for k, v in ndb_options.items())
        clause += f" COMMENT=\"NDB_TABLE={opts}\""
    return clause


def fk_tables(engine: str) -> dict[str, str]:
    """The FK schema of the field facts (docs/lab.md, "Field facts"):
    two parents, children with 0, 1 (fk_forum) and 2 FKs."""
    eng = _engine_clause(engine)
    # InnoDB needs the auto-increment column first in some index; NDB does not: the field
    # facts ran this very schema on NDB (pid AUTO_INCREMENT third in PRIMARY KEY (uid, fid,
    # pid), shared/reference/field-facts.md section 1), and NDB tables take AUTO_INCREMENT
    # in a composite primary key (ndb_partition_key.test: c1 ... AUTO_INCREMENT, PRIMARY
    # KEY(c1,c3) ENGINE=NDB).
    pid_key = "" if engine == "ndb" else ",\n  KEY pid (pid)"
    cols = ("  uid INT UNSIGNED NOT NULL,\n  fid INT UNSIGNED NOT NULL,\n"
            "  pid BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,\n  message VARCHAR(1024),\n"
            f"  PRIMARY KEY (uid, fid, pid),\n  KEY forum (fid){pid_key}")

    def fk(prefix: str, which: tuple[str, ...]) -> str:
        # NDB: CONSTRAINT name FOREIGN KEY (col) REFERENCES parent (col) inside CREATE TABLE
        # (mysql-test/suite/ndb/t/ndb_fk_db.test: constraint fk1 foreign key(a) references
        # mydb0.parent (a) ... engine = ndb), ON DELETE CASCADE from a parent's primary key
        # to an indexed child column (ndb_fk_cascade_delete.test, "PK vs OI": foreign key
        # (c) references parent (a) on delete cascade)
        refs = {"forum": "(fid) REFERENCES forum (fid)", "user": "(uid) REFERENCES users (uid)"}
        # Constraint names are per database in InnoDB, hence the per-table prefix.
        return "".join(f",\n  CONSTRAINT {prefix}_{w} FOREIGN KEY {refs[w]} ON DELETE CASCADE"
                       for w in which)

    children = {
        # name -> the FKs it has. A `_2w` twin is written by the two-writer group only, so
        # every variant of a comparison writes a table of its own and all of them grow
        # alike (loadgen_tables.py holds them at one size).
        "users_posts": (), "users_posts_fk1": ("forum",), "users_posts_fk": ("forum", "user"),
        "users_posts_2w": (), "users_posts_fk_2w": ("forum", "user"),
    }
    out = {
        "users": ("CREATE TABLE IF NOT EXISTS users (\n"
                  "  uid INT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,\n"
                  "  name VARCHAR(255),\n  email VARCHAR(255),\n"
                  "  view_cnt BIGINT UNSIGNED DEFAULT 0,\n  created BIGINT UNSIGNED DEFAULT 0\n"
                  f") {eng}"),
        "forum": ("CREATE TABLE IF NOT EXISTS forum (\n"
                  "  fid INT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,\n"
                  f"  name VARCHAR(255)\n) {eng}"),
    }
    for name, which in children.items():
        prefix = name.removeprefix("users_posts").strip("_") or "nofk"
        out[name] = (f"CREATE TABLE IF NOT EXISTS {name} (\n{cols}{fk(prefix, which)}\n"
                     f") {eng}")
    return out


def read_backup_tables(engine: str) -> dict[str, str]:
    """Galera: one table (the variants differ in wsrep_sync_wait); NDB: READ_BACKUP=0/1."""
    body = "  id INT UNSIGNED NOT NULL PRIMARY KEY,\n  v BIGINT NOT NULL DEFAULT 0\n"
    if engine == "ndb":
        # READ_BACKUP={1 | 0} in the table comment (manual 13.1.20.11; since NDB 8.0.19 1
        # is the default, so rb0 has to say 0)
        return {f"rb_rb{n}": (f"CREATE TABLE IF NOT EXISTS rb_rb{n} (\n{body}) "
                              + _engine_clause(engine, {"READ_BACKUP": n})) for n in (0, 1)}
    if engine == "innodb":
        raise DDLError("read_backup needs a cluster: engine galera (reads on another node) or"
                       " ndb (READ_BACKUP tables); a single InnoDB server has no replicas")
    return {"rb": f"CREATE TABLE IF NOT EXISTS rb (\n{body}) {_engine_clause(engine)}"}


def partitioning_tables(engine: str, counts: tuple[int, ...] = (1, 8),
                        ndb_partition_balance: str | None = None) -> dict[str, str]:
    """One table per partition count; partitioned by KEY(id), so point selects prune to one
    partition and id range scans touch all of them."""
    body = ("  id INT UNSIGNED NOT NULL PRIMARY KEY,\n  k INT UNSIGNED NOT NULL DEFAULT 0,\n"
            "  c CHAR(120) NOT NULL DEFAULT '',\n  pad CHAR(60) NOT NULL DEFAULT '',\n"
            "  KEY k (k)\n")
    out = {}
    if ndb_partition_balance and ndb_partition_balance not in PARTITION_BALANCES:
        raise DDLError(f"ndb_partition_balance {ndb_partition_balance!r} is not one of"
                       f" {', '.join(PARTITION_BALANCES)}")
    for n in counts:
        if engine == "ndb" and ndb_partition_balance and n > 1:
            # NDB sizes the table from the cluster (LDMs x nodes) instead of a fixed count:
            # COMMENT="NDB_TABLE=PARTITION_BALANCE=..." (manual 13.1.20.11;
            # ndb_alter_table_comment.test: CREATE TABLE t (a int primary key)
            # COMMENT="NDB_TABLE=PARTITION_BALANCE=FOR_RP_BY_LDM" engine=ndb)
            tail = _engine_clause(engine, {"PARTITION_BALANCE": ndb_partition_balance})
        else:
            # NDB: ENGINE=NDB PARTITION BY KEY(c3) PARTITIONS 5, KEY on primary key columns
            # only (mysql-test/suite/ndb/t/ndb_partition_key.test)
            tail = f"{_engine_clause(engine)}\nPARTITION BY KEY (id) PARTITIONS {n}"
        out[f"part_p{n}"] = f"CREATE TABLE IF NOT EXISTS part_p{n} (\n{body}) {tail}"
    return out


def batching_tables(engine: str) -> dict[str, str]:
    """Integers with an explicit primary key, and without one (the engine's hidden key).

    NDB adds a hidden primary key column to a table without one (ndb_basic.test: "Create
    table without primary key / a hidden primary key column is created by handler",
    CREATE TABLE t1 (id INT, id2 int) engine=ndbcluster)."""
    eng = _engine_clause(engine)
    return {
        "bp_pk": f"CREATE TABLE IF NOT EXISTS bp_pk (\n  id BIGINT NOT NULL PRIMARY KEY\n) {eng}",
        "bp_nopk": f"CREATE TABLE IF NOT EXISTS bp_nopk (\n  id BIGINT NOT NULL\n) {eng}",
    }


INJECT_KINDS = ("aa", "sleep", "cpu", "hot", "pad")


def inject_tables(engine: str) -> dict[str, str]:
    """The inject experiments' tables: a known server-side cost and its twin per kind
    (inj_<kind>_v, inj_<kind>_b), all with the same DDL, so a mechanism and its twin differ
    only in the values their statements carry (lua/cs_inject.lua, inject.py)."""
    body = ("  id INT UNSIGNED NOT NULL PRIMARY KEY,\n  k BIGINT UNSIGNED NOT NULL DEFAULT 0,\n"
            "  work INT UNSIGNED NOT NULL DEFAULT 0,\n"
            "  pad VARBINARY(8192) NOT NULL DEFAULT ''\n")
    return {t: f"CREATE TABLE IF NOT EXISTS {t} (\n{body}) {_engine_clause(engine)}"
            for t in (f"inj_{k}_{side}" for k in INJECT_KINDS for side in ("b", "v"))}


def tables_for(experiment: str, engine: str, **options: object) -> dict[str, str]:
    """Table name -> CREATE TABLE for an experiment kind on an engine."""
    builders = {"fk": fk_tables, "read_backup": read_backup_tables,
                "partitioning": partitioning_tables, "batching_pk": batching_tables,
                "inject": inject_tables}
    try:
        build = builders[experiment]
    except KeyError:
        raise DDLError(f"no DDL for experiment kind {experiment!r} (known: "
                       f"{', '.join(builders)})") from None
    if experiment == "partitioning":
        return build(engine, **options)  # type: ignore[operator]
    return build(engine)  # type: ignore[operator]
