"""The loadgen on NDB, where NDB cannot run: every statement it would send there checked
against the forms MySQL's manual and mysql-server's own NDB test suite use (each clause kind
cited where the suite uses it), and the refusal on a server without NDBCLUSTER
against a real MariaDB (the lab's). The NDB path has never run against a real NDB here.
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from clusterscope_loadgen import config, ddl, target
from clusterscope_loadgen.config import LUA_DIR
from helpers import REPO, SHARED


# -- the statements, as clause kinds --------------------------------------------------------
def _strip(sql: str) -> str:
    return re.sub(r"\s+", " ", sql).strip()


def _primary_key(stmt: str) -> list[str]:
    """The primary key's columns: PRIMARY KEY (a, b) or a column declared PRIMARY KEY."""
    if m := re.search(r"PRIMARY KEY(?: USING HASH)? ?\(([^)]*)\)", stmt, re.I):
        return [c.strip().strip("`").lower() for c in m.group(1).split(",")]
    m = re.search(r"[(,] ?(\w+) [^,]*?\bPRIMARY KEY\b", stmt, re.I)
    return [m.group(1).lower()] if m else []


def _tail(stmt: str) -> str:
    """What follows a CREATE TABLE's column list: the table options and partitioning."""
    start = stmt.find("(")
    depth = 0
    for i in range(start, len(stmt)):
        depth += {"(": 1, ")": -1}.get(stmt[i], 0)
        if depth == 0:
            return stmt[i + 1:]
    return ""


def clauses(sql: str) -> set[str]:
    """The clause kinds of a CREATE/ALTER TABLE statement: its engine, each table option
    by name (NDB_TABLE options one by one), partitioning, foreign keys and their actions,
    and the shape of its keys. Anything the loadgen writes that no recorded statement has
    is a kind of its own, so it cannot pass unseen."""
    s = _strip(sql)
    out: set[str] = set()
    create = s.upper().startswith("CREATE TABLE")
    tail = _tail(s) if create else s
    for m in re.finditer(r"\b([A-Z_]+) ?= ?(\"[^\"]*\"|\S+)", tail, re.I):
        name, value = m.group(1).upper(), m.group(2)
        if name == "ENGINE":
            out.add(f"engine={value.lower()}")
        elif name == "COMMENT" and value.upper().startswith('"NDB_TABLE='):
            for opt in value.strip('"')[len("NDB_TABLE="):].split(","):
                out.add(f"ndb_table:{opt.split('=', 1)[0].upper()}")
        elif name != "ALGORITHM":
            out.add(f"table option {name}")
    if m := re.search(r"\bENGINE (NDBCLUSTER|NDB)\b", tail, re.I):  # ENGINE without '='
        out.add(f"engine={m.group(1).lower()}")
    if m := re.search(r"\bPARTITION BY (LINEAR )?(\w+)", s, re.I):
        out.add(f"partition by {(m.group(1) or '').lower()}{m.group(2).lower()}")
    if re.search(r"\bPARTITIONS \d+", s, re.I):
        out.add("partitions n")
    if re.search(r"\bFOREIGN KEY ?\(", s, re.I):
        out.add("foreign key")
        if re.search(r"\bCONSTRAINT \w+ FOREIGN KEY\b", s, re.I):
            out.add("foreign key: named constraint")
        for m in re.finditer(r"\bON (DELETE|UPDATE) (CASCADE|RESTRICT|SET NULL|NO ACTION|"
                             r"SET DEFAULT)\b", s, re.I):
            out.add(f"foreign key: on {m.group(1).lower()} {m.group(2).lower()}")
    if create:
        pk = _primary_key(s)
        if not pk:
            out.add("no primary key (hidden key)")
        elif len(pk) > 1:
            out.add("composite primary key")
        if re.search(r"\bAUTO_INCREMENT\b", s, re.I):
            out.add("auto_increment" + (" in a composite primary key" if len(pk) > 1 else ""))
        if re.search(r"(?:,|\() ?(?:KEY|INDEX) ?(?:\w+ ?)?\(", s, re.I):
            out.add("secondary index")
        if re.search(r"\bUNIQUE\b", s, re.I):
            out.add("unique key")
    return out


# Where each clause kind is used on NDB by mysql-server's own NDB test suite
# (mysql/mysql-server, mysql-test/suite/ndb/t/<file>, at the commit given): facts read
# there, not the statements, which stay in that repository.
_SUITE = "mysql/mysql-server mysql-test/suite/ndb/t/"
BASIC = _SUITE + "ndb_basic.test@0512f6115f821a1c019bcfa16aed7ca3b64d52b8"
COMMENT = _SUITE + "ndb_alter_table_comment.test@581368e2a2653458e4eb14ec0f355b21b40909b8"
FK_CASCADE = _SUITE + "ndb_fk_cascade_delete.test@6e8b627d0b53ae0071f40faf3d6e04cc1b7767cf"
FK_DB = _SUITE + "ndb_fk_db.test@0512f6115f821a1c019bcfa16aed7ca3b64d52b8"
PART_KEY = _SUITE + "ndb_partition_key.test@087b0bbd728a471c61373cf852bd109720f6237c"
REAL_FORMS: dict[str, tuple[str, ...]] = {
    "engine=ndbcluster": (BASIC,),
    "engine=ndb": (BASIC, COMMENT, FK_CASCADE, FK_DB, PART_KEY),
    "ndb_table:NOLOGGING": (COMMENT,),
    "ndb_table:READ_BACKUP": (COMMENT,),
    "ndb_table:PARTITION_BALANCE": (COMMENT,),
    "ndb_table:FULLY_REPLICATED": (COMMENT,),
    "foreign key": (FK_CASCADE, FK_DB),
    "foreign key: named constraint": (FK_CASCADE, FK_DB),
    "foreign key: on delete cascade": (FK_CASCADE,),
    "foreign key: on update restrict": (FK_CASCADE,),
    "partition by key": (PART_KEY,),
    "partitions n": (PART_KEY,),
    "no primary key (hidden key)": (BASIC,),
    "composite primary key": (BASIC, PART_KEY),
    "auto_increment": (BASIC, FK_CASCADE),
    "auto_increment in a composite primary key": (PART_KEY,),
    "secondary index": (BASIC, FK_CASCADE, FK_DB),
    "unique key": (FK_CASCADE, FK_DB),
}

# The NDB_TABLE options and their values: the syntax block of MySQL 8.0 Reference Manual
# 13.1.20.11 "Setting NDB_TABLE Options" (dev.mysql.com/doc/refman/8.0/en/
# create-table-ndb-comment-options.html), which adds that spaces are not permitted within
# the quoted string.
MANUAL_GRAMMAR: dict[str, set[str]] = {
    "NOLOGGING": {"1", "0"},
    "READ_BACKUP": {"1", "0"},
    "PARTITION_BALANCE": {"FOR_RP_BY_NODE", "FOR_RA_BY_NODE", "FOR_RP_BY_LDM", "FOR_RA_BY_LDM",
                          "FOR_RA_BY_LDM_X_2", "FOR_RA_BY_LDM_X_3", "FOR_RA_BY_LDM_X_4"},
    "FULLY_REPLICATED": {"1", "0"},
}

# Statements written here in the styles those tests use (lower or upper case, ENGINE after
# the columns or on its own line, '=' with or without spaces, the comment before ENGINE,
# ALTER TABLE with ALGORITHM): the clause reader must read each kind in each style.
STYLES: dict[str, set[str]] = {
    "CREATE TABLE a (k INT NOT NULL PRIMARY KEY, v INT) ENGINE=NDBCLUSTER":
        {"engine=ndbcluster"},
    "create table b (x int, y int) engine=ndbcluster": {"engine=ndbcluster",
                                                        "no primary key (hidden key)"},
    "CREATE TABLE c (p INT, q INT, r INT, s INT, PRIMARY KEY(p,q,r))\n ENGINE = NDB\n"
    " PARTITION BY KEY (p,q)": {"engine=ndb", "composite primary key", "partition by key"},
    "CREATE TABLE d (i MEDIUMINT NOT NULL AUTO_INCREMENT, j INT NOT NULL, PRIMARY KEY(i,j))"
    " ENGINE=NDB PARTITION BY KEY(j) PARTITIONS 3":
        {"engine=ndb", "composite primary key", "auto_increment in a composite primary key",
         "partition by key", "partitions n"},
    "create table e (a int primary key auto_increment, b int not null, unique(b) using hash,"
    " index(b)) engine = ndb": {"engine=ndb", "auto_increment", "unique key",
                                "secondary index"},
    "create table f (a int primary key, constraint f1 foreign key(a) references e (a),"
    " index(a)) engine = ndb": {"engine=ndb", "foreign key", "foreign key: named constraint",
                                "secondary index"},
    "alter table f add constraint f2 foreign key (a) references e (a) on delete cascade"
    " on update restrict": {"foreign key", "foreign key: named constraint",
                            "foreign key: on delete cascade", "foreign key: on update restrict"},
    'CREATE TABLE g (k INT PRIMARY KEY) ENGINE=ndb COMMENT="NDB_TABLE=NOLOGGING=1,READ_BACKUP=0"':
        {"engine=ndb", "ndb_table:NOLOGGING", "ndb_table:READ_BACKUP"},
    'create table h (k int primary key) COMMENT="NDB_TABLE=PARTITION_BALANCE=FOR_RP_BY_LDM"'
    " engine=ndb": {"engine=ndb", "ndb_table:PARTITION_BALANCE"},
    'ALTER TABLE h ALGORITHM=inplace, COMMENT="NDB_TABLE=FULLY_REPLICATED=0"':
        {"ndb_table:FULLY_REPLICATED"},
}


def ndb_statements() -> dict[str, str]:
    """Every CREATE the loadgen sends to NDB: each experiment of the shipped file, and the
    partitioning tables with every PARTITION_BALANCE an experiment may ask for."""
    out: dict[str, str] = {}
    for exp in config.load().values():
        if not any(v.runs_on("ndb") for v in exp.variants):
            continue
        for table, stmt in exp.tables("ndb").items():
            out[f"{exp.name}.{table}"] = stmt
    for balance in ddl.PARTITION_BALANCES:
        for table, stmt in ddl.partitioning_tables("ndb", ndb_partition_balance=balance).items():
            out[f"partitioning[{balance}].{table}"] = stmt
    return out


def test_the_clause_reader_reads_each_kind_in_the_styles_the_ndb_suite_uses() -> None:
    for stmt, kinds in STYLES.items():
        assert clauses(stmt) == kinds, stmt
    assert set().union(*STYLES.values()) == set(REAL_FORMS)


def test_every_ndb_statement_follows_a_real_form() -> None:
    statements = ndb_statements()
    assert {"fk.users_posts_fk", "read_backup.rb_rb1", "partitioning.part_p8",
            "batching_pk.bp_nopk"} <= set(statements)
    assert set(ddl.PARTITION_BALANCES) == MANUAL_GRAMMAR["PARTITION_BALANCE"]
    unmatched = []
    for name, stmt in statements.items():
        kinds = clauses(stmt)
        assert "engine=ndbcluster" in kinds, name
        unmatched += [f"{name}: {k}" for k in sorted(kinds) if k not in REAL_FORMS]
        # every NDB_TABLE option and value is the manual's, written as the grammar says
        if m := re.search(r'COMMENT="NDB_TABLE=([^"]*)"', stmt):
            assert " " not in m.group(1), (name, "no spaces inside the quoted string")
            for opt in m.group(1).split(","):
                key, value = opt.split("=", 1)
                assert value in MANUAL_GRAMMAR.get(key, set()), (name, opt)
    assert not unmatched, "clauses no real NDB statement has:\n" + "\n".join(unmatched)


def test_the_fk_schema_is_the_one_the_field_facts_ran_on_ndb() -> None:
    """AUTO_INCREMENT third in a composite primary key and the FK to a primary key prefix:
    the field facts measured exactly this schema on NDB (2 data nodes, 2 SQL nodes)."""
    facts = SHARED / "reference" / "field-facts.md"
    if not facts.exists():
        pytest.skip("the shared reference is not beside this checkout")
    text = _strip(facts.read_text())
    assert "PRIMARY KEY(uid,fid,pid)" in text and "pid auto_increment" in text
    assert "fk_forum FOREIGN KEY(fid) REFERENCES forum(fid) ON DELETE CASCADE" in text
    assert "fk_user FOREIGN KEY(uid) REFERENCES users(uid) ON DELETE CASCADE" in text
    fk = _strip(ddl.fk_tables("ndb")["users_posts_fk"])
    assert "pid BIGINT UNSIGNED NOT NULL AUTO_INCREMENT" in fk
    assert "PRIMARY KEY (uid, fid, pid)" in fk and "KEY pid" not in fk
    assert "FOREIGN KEY (fid) REFERENCES forum (fid) ON DELETE CASCADE" in fk
    assert "FOREIGN KEY (uid) REFERENCES users (uid) ON DELETE CASCADE" in fk


def test_a_partition_balance_outside_the_manual_is_refused() -> None:
    with pytest.raises(ddl.DDLError, match="FOR_RP_BY_LDM"):
        ddl.partitioning_tables("ndb", ndb_partition_balance="FOR_EVERY_NODE")


def test_nothing_sent_on_ndb_needs_galera() -> None:
    """An NDB SQL node is a MySQL server: no wsrep variable exists there."""
    assert not [s for s in target.IDENTITY_SQL if "@@wsrep" in s]
    lua = (LUA_DIR / "cs_common.lua").read_text()
    identity = lua[lua.index("function M.identity"):]
    identity = identity[:identity.index("\nend")]
    assert "@@wsrep" not in identity
    for sql in target.IDENTITY_SQL:  # the driver and the Lua side compute the same identity
        assert f'"{sql}"' in identity, sql
    for exp in config.load().values():
        for v in exp.variants:
            if v.runs_on("ndb") and v.engines:
                assert "sync_wait" not in v.options, (exp.name, v.name)


# -- the refusal, on a real server without NDBCLUSTER ----------------------------------------
@pytest.mark.lab
def test_engine_ndb_refuses_a_server_without_ndbcluster(ndb_lab) -> None:
    """The lab's NDB SQL node is a MariaDB (the simulator serves ndbinfo views): SHOW ENGINES
    there has no NDBCLUSTER, and the loadgen says so before it writes anything."""
    cnf = ndb_lab.root / "clients" / "ndb-sql.cnf"
    proc = subprocess.run([sys.executable, "-m", "clusterscope_loadgen", "run", "--experiment",
                           "read_backup", "--engine", "ndb", "--target", str(cnf),
                           "--description", str(ndb_lab.root / "clusterscope.yml"),
                           "--cluster", "lab-ndb", "--rounds", "1"],
                          capture_output=True, text=True, timeout=120,
                          cwd=REPO)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    err = proc.stderr
    assert "NDBCLUSTER" in err and "SHOW ENGINES" in err and "MariaDB" in err, err
    port = re.search(r"^port\s*=\s*(\d+)", cnf.read_text(), re.M).group(1)
    assert f"127.0.0.1:{port}" in err and "innodb" in err.lower()
    assert "Traceback" not in err
