"""The loadgen on NDB, where NDB cannot run: every statement it would send there checked
against the forms MySQL's manual and mysql-server's own NDB test suite use (recorded with
their source in shared/fixtures/ndb-ddl/), and the refusal on a server without NDBCLUSTER
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

FORMS = SHARED / "fixtures" / "ndb-ddl"  # recorded from other repositories: shared/


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


def recorded() -> dict[str, list[tuple[str, str]]]:
    """Clause kind -> the recorded NDB statements that have it, with their source file."""
    out: dict[str, list[tuple[str, str]]] = {}
    for f in sorted(FORMS.glob("*.sql")):
        text = "\n".join(ln for ln in f.read_text().splitlines() if not ln.startswith("#"))
        for stmt in filter(None, (_strip(x) for x in text.split(";"))):
            # the suite's statements all address NDB tables; a CREATE says so itself
            if stmt.upper().startswith("CREATE") and not re.search(r"ENGINE ?=? ?NDB", stmt,
                                                                     re.I):
                continue
            for kind in clauses(stmt):
                out.setdefault(kind, []).append((f.name, stmt))
    return out


def manual_grammar() -> dict[str, set[str]]:
    """NDB_TABLE option -> its allowed values, from the manual's syntax block."""
    text = (FORMS / "refman-8.0-ndb-table-options.txt").read_text()
    body = text[text.index("ndb_table_option: {"):]
    grammar: dict[str, set[str]] = {}
    for m in re.finditer(r"(\w+)=\{([^}]*)\}", body):
        grammar[m.group(1)] = {v.strip() for v in m.group(2).split("|")}
    return grammar


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


def test_the_clause_reader_reads_the_recorded_forms() -> None:
    forms = recorded()
    # each kind the checks below lean on is found in the recorded statements
    for kind in ("engine=ndbcluster", "engine=ndb", "ndb_table:READ_BACKUP",
                 "ndb_table:PARTITION_BALANCE", "foreign key: named constraint",
                 "foreign key: on delete cascade", "partition by key", "partitions n",
                 "no primary key (hidden key)", "auto_increment in a composite primary key",
                 "secondary index", "composite primary key"):
        assert kind in forms, kind
    assert manual_grammar()["READ_BACKUP"] == {"1", "0"}
    assert "FOR_RA_BY_LDM_X_4" in manual_grammar()["PARTITION_BALANCE"]


def test_every_ndb_statement_follows_a_recorded_real_form() -> None:
    forms = recorded()
    grammar = manual_grammar()
    statements = ndb_statements()
    assert {"fk.users_posts_fk", "read_backup.rb_rb1", "partitioning.part_p8",
            "batching_pk.bp_nopk"} <= set(statements)
    unmatched = []
    for name, stmt in statements.items():
        kinds = clauses(stmt)
        assert "engine=ndbcluster" in kinds, name
        unmatched += [f"{name}: {k}" for k in sorted(kinds) if k not in forms]
        # every NDB_TABLE option and value is the manual's, written as the grammar says
        if m := re.search(r'COMMENT="NDB_TABLE=([^"]*)"', stmt):
            assert " " not in m.group(1), (name, "no spaces inside the quoted string")
            for opt in m.group(1).split(","):
                key, value = opt.split("=", 1)
                assert value in grammar.get(key, set()), (name, opt)
    assert not unmatched, "clauses no recorded NDB statement has:\n" + "\n".join(unmatched)


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
                           "--rounds", "1"], capture_output=True, text=True, timeout=120,
                          cwd=REPO)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    err = proc.stderr
    assert "NDBCLUSTER" in err and "SHOW ENGINES" in err and "MariaDB" in err, err
    port = re.search(r"^port\s*=\s*(\d+)", cnf.read_text(), re.M).group(1)
    assert f"127.0.0.1:{port}" in err and "innodb" in err.lower()
    assert "Traceback" not in err
