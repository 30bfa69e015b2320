"""Hostile input for the configuration readers, property-based (Hypothesis, the
`clusterscope` profile of conftest.py: fixed seed, bounded examples): the exporter's web
config (and the Authorization header it reads), rules/config.yaml, the period parser and
the loadgen's experiments file.

Each reader either returns something its caller can use, or raises its own error type
(which the callers catch) with a message naming the input and the problem. The committed
files are the starting points: one key at a time is removed, retyped, set to a hostile
value, or an unknown key is added. Each case the properties found is kept as an explicit
example (or a plain test) with what it was.
"""

from __future__ import annotations

import copy
import datetime
import math
from pathlib import Path

import pytest
import yaml
from clusterscope_loadgen import config as loadgen_config
from clusterscope_loadgen import ddl
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from hypothesis import example, given
from hypothesis import strategies as st
from ndbinfo_exporter.errors import ConfigError
from ndbinfo_exporter.http_server import basic_auth
from ndbinfo_exporter.web import settings as web_settings

from clusterscope.analysis.periods import Period, PeriodError, parse_time
from clusterscope.rules import generate
from clusterscope.rules.rules_config import CONFIG, RulesConfigError, check, load_config

# Values a hand edit or a hostile file can put anywhere.
hostile_scalar = st.one_of(
    st.none(), st.booleans(), st.integers(-10**30, 10**30),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=40),
    st.sampled_from(["", "0", "-1", "5m", "1 minute", "nan", ".inf", "~", "yes", "\"", "\\",
                     "a\nb", "x" * 300, "{{ $x }}", "job=\"a\"", "exec|send", "TLS13"]))
hostile_value = st.recursive(hostile_scalar, lambda inner: st.lists(inner, max_size=3)
                             | st.dictionaries(st.text(max_size=10), inner, max_size=3),
                             max_leaves=8)


def leaves(d: object, prefix: tuple = ()) -> list[tuple]:
    """Every key path of a nested mapping (mappings and their leaves)."""
    out = []
    if isinstance(d, dict):
        for k, v in d.items():
            out.append(prefix + (k,))
            out += leaves(v, prefix + (k,))
    elif isinstance(d, list):
        for i, v in enumerate(d):
            out.append(prefix + (i,))
            out += leaves(v, prefix + (i,))
    return out


@st.composite
def mutation(draw: st.DrawFn, base: object) -> tuple[object, tuple, str]:
    """(the document with one change, the path changed, what was done)."""
    doc = copy.deepcopy(base)
    path = draw(st.sampled_from(leaves(doc)))
    parent = doc
    for k in path[:-1]:
        parent = parent[k]
    how = draw(st.sampled_from(["delete", "retype", "add"]))
    if how == "delete" and isinstance(parent, dict):
        del parent[path[-1]]
    elif how == "add" and isinstance(parent, dict):
        parent[draw(st.text(min_size=1, max_size=12))] = draw(hostile_value)
    else:
        how = "retype"
        parent[path[-1]] = draw(hostile_value)
    return doc, path, how


def dump(doc: object) -> str:
    return yaml.safe_dump(doc, allow_unicode=True)


# -- rules/config.yaml ------------------------------------------------------------------------
RULES = yaml.safe_load(CONFIG.read_text())


@given(mutation(RULES))
# found: before the schema, each of these went through to a KeyError or TypeError in a
# generator, or into a rule file vmalert refuses ("1 minute" is no duration; a stray quote
# in a selector breaks the PromQL)
@example((dict(RULES, ndb={**RULES["ndb"], "data_node_down_for": "1 minute"}),
          ("ndb", "data_node_down_for"), "retype"))
@example(({k: v for k, v in RULES.items() if k != "selectors"}, ("selectors",), "delete"))
@example((dict(RULES, selectors={**RULES["selectors"], "galera": 'job="gal"era"'}),
          ("selectors", "galera"), "retype"))
@example((dict(RULES, ndb={**RULES["ndb"], "redo_used_ratio_max": float("nan")}),
          ("ndb", "redo_used_ratio_max"), "retype"))
def test_rules_config_generates_or_names_the_key(tmp_path_factory: pytest.TempPathFactory,
                                                 change: tuple) -> None:
    doc, path, how = change
    f = tmp_path_factory.mktemp("rules") / "config.yaml"
    f.write_text(dump(doc))
    try:
        c = load_config(f)
    except RulesConfigError as exc:
        msg = str(exc)
        assert msg.startswith(f"{f}: ")
        # the first key of the change's path is named (a deeper one when it is the culprit)
        assert str(path[0]) in msg or how == "add", msg
        return
    files = generate.render_files(c)  # what passes the check generates rules
    for text in files.values():
        assert yaml.safe_load(text)["groups"]


@given(st.binary(max_size=300) | st.text(max_size=300).map(str.encode))
@example(b"\xff\xfe")
@example(b"[" * 5000)
def test_rules_config_any_bytes(tmp_path_factory: pytest.TempPathFactory, raw: bytes) -> None:
    f = tmp_path_factory.mktemp("rules") / "config.yaml"
    f.write_bytes(raw)
    with pytest.raises(RulesConfigError, match=f"^{f}: "):
        load_config(f)


def test_committed_rules_config_passes_its_schema() -> None:
    assert check(yaml.safe_load(CONFIG.read_text())) is not None
    with pytest.raises(RulesConfigError, match=r"ndb\.memory_for: 'soon' is not a Prometheus"):
        check(dict(RULES, ndb={**RULES["ndb"], "memory_for": "soon"}))


# -- the period parser ------------------------------------------------------------------------
iso = st.datetimes(min_value=datetime.datetime(1, 1, 1), max_value=datetime.datetime(9999, 1, 1),
                   timezones=st.none() | st.timezones()).map(lambda d: d.isoformat())
time_text = st.one_of(iso, st.floats().map(repr), st.integers(-10**20, 10**20).map(str),
                      st.sampled_from(["now", "-15m", "-1.5h", "-99999999999999999999d",
                                       "nan", "inf", "-inf", "1e400", "Z", " now "]),
                      st.text(max_size=30))


@given(st.one_of(st.text(max_size=80), st.tuples(time_text, time_text).map("..".join)))
# found: nan, inf and 1e400 passed float() into a period that compared false both ways, and a
# time past year 9999 crashed str(period) (OverflowError)
@example("nan..nan")
@example("0..inf")
@example("0..1e20")
@example("0001-01-01T00:00:00+01:00..now")
def test_period_parses_or_says_why(text: str) -> None:
    try:
        p = Period.parse(text, now=1_800_000_000.0)
    except PeriodError as exc:
        assert str(exc)  # a message for the command line
        return
    assert math.isfinite(p.start) and math.isfinite(p.end) and p.start < p.end
    assert ".." in str(p)  # printable, both ends inside datetime's range


def test_parse_time_range_message() -> None:
    with pytest.raises(PeriodError, match=r"time '1e400' is outside 1970-01-01\.\.9999-12-31"):
        parse_time("1e400")


# -- the loadgen's experiments file -----------------------------------------------------------
EXPERIMENTS = yaml.safe_load(loadgen_config.DEFAULT_CONFIG.read_text())


@given(mutation(EXPERIMENTS))
# found: each of these was accepted or crashed (TypeError, AttributeError, OverflowError)
# instead of a ConfigError: a string of engines read letter by letter, `true` threads, an
# infinite max_rows, a list as baseline, a number as experiment name, a partition balance
# that ends the CREATE TABLE's COMMENT string
@example((dict(EXPERIMENTS, experiments={"fk": {**EXPERIMENTS["experiments"]["fk"],
          "variants": [{"name": "a", "table": "users_posts", "engines": "ndb"}]}}),
          ("experiments", "fk", "variants"), "retype"))
@example((dict(EXPERIMENTS, experiments={"fk": {**EXPERIMENTS["experiments"]["fk"],
                                                "threads": True}}),
          ("experiments", "fk", "threads"), "retype"))
@example((dict(EXPERIMENTS, defaults={**EXPERIMENTS["defaults"], "max_rows": float("inf")}),
          ("defaults", "max_rows"), "retype"))
@example((dict(EXPERIMENTS, experiments={"fk": {**EXPERIMENTS["experiments"]["fk"],
          "variants": [{"name": "a", "table": "t"}, {"name": "b", "table": "t",
                                                     "baseline": ["a"]}]}}),
          ("experiments", "fk", "variants"), "retype"))
@example((dict(EXPERIMENTS, experiments={7: EXPERIMENTS["experiments"]["fk"]}),
          ("experiments",), "retype"))
@example((dict(EXPERIMENTS, experiments={"partitioning": {
    **EXPERIMENTS["experiments"]["partitioning"],
    "ndb_partition_balance": 'FOR_RA_BY_NODE"; DROP TABLE users; --'}}),
    ("experiments", "partitioning"), "retype"))
@example((dict(EXPERIMENTS, defaults=["window"]), ("defaults",), "retype"))
@example((dict(EXPERIMENTS, experiments={"fk": {**EXPERIMENTS["experiments"]["fk"],
                                                "variants": 5}}),
          ("experiments", "fk", "variants"), "retype"))
def test_experiments_file_runs_or_names_the_experiment(
        tmp_path_factory: pytest.TempPathFactory, change: tuple) -> None:
    doc, path, how = change
    f = tmp_path_factory.mktemp("loadgen") / "experiments.yaml"
    f.write_text(dump(doc))
    try:
        exps = loadgen_config.load(f)
    except loadgen_config.ConfigError as exc:
        assert str(exc).startswith(str(f)), exc
        return
    for exp in exps.values():  # what the runner does with it first
        assert isinstance(exp.name, str) and math.isfinite(exp.window)
        assert exp.ndb_partition_balance in (None, *loadgen_config.PARTITION_BALANCES)
        for engine in ddl.ENGINES:
            try:
                exp.tables(engine)
                exp.variants_for(engine)
            except (ddl.DDLError, loadgen_config.ConfigError):
                pass


@given(st.binary(max_size=300))
@example(b"\xff")
@example(b"experiments: " + b"[" * 5000)
def test_experiments_file_any_bytes(tmp_path_factory: pytest.TempPathFactory,
                                    raw: bytes) -> None:
    f = tmp_path_factory.mktemp("loadgen") / "experiments.yaml"
    f.write_bytes(raw)
    with pytest.raises(loadgen_config.ConfigError):
        loadgen_config.load(f)


# -- the exporter's web config ----------------------------------------------------------------
@pytest.fixture(scope="module")
def pem_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("web-pem")
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(1)
            .not_valid_before(now - datetime.timedelta(hours=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    (d / "server.crt").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (d / "server.key").write_bytes(key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption()))
    (d / "encrypted.key").write_bytes(key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(b"secret")))
    return d


WEB = {"tls_server_config": {"cert_file": "server.crt", "key_file": "server.key",
                             "client_auth_type": "RequireAndVerifyClientCert",
                             "client_ca_file": "server.crt", "client_allowed_sans": ["a"],
                             "min_version": "TLS12", "max_version": "TLS13",
                             "cipher_suites": ["TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"],
                             "curve_preferences": ["CurveP256"],
                             "prefer_server_cipher_suites": True},
       "http_server_config": {"http2": True, "headers": {"X-Frame-Options": "deny"}},
       "rate_limit": {"interval": "1s", "burst": 5},
       "basic_auth_users": {"prometheus": "$2b$04$" + "a" * 53}}


def web_parse(d: Path, raw: bytes) -> web_settings.Settings | None:
    """Parsed, or None after a ConfigError that names the file; nothing else escapes."""
    f = d / "web.yml"
    try:
        return web_settings.parse(f, raw)
    except ConfigError as exc:
        assert str(exc).startswith(f"{f}: "), exc
        return None


@given(mutation(WEB))
def test_web_config_mutations_parse_or_name_the_file(pem_dir: Path, change: tuple) -> None:
    doc, _, _ = change
    web_parse(pem_dir, dump(doc).encode())


def test_web_config_scalars_keep_their_text(pem_dir: Path) -> None:
    """go-yaml gives a string field the scalar as written: user `yes` and `123`, header
    value `1` (PyYAML alone reads True, 123 and 1)."""
    h = "$2b$04$" + "a" * 53
    s = web_settings.parse(pem_dir / "web.yml", f"basic_auth_users:\n  yes: {h}\n  123: {h}\n"
                        "http_server_config:\n  headers:\n    X-XSS-Protection: 1\n".encode())
    assert set(s.users) == {b"yes", b"123"} and s.headers == (("X-XSS-Protection", "1"),)


@given(st.binary(max_size=400) | st.text(max_size=400).map(str.encode))
# found by reading: a duplicated key silently kept the last (go-yaml's strict mode refuses);
# a key file with a passphrase would prompt on the terminal and hang the start
@example(b"basic_auth_users:\n  a: $2b$04$" + b"a" * 53 + b"\n  a: $2b$04$" + b"b" * 53 + b"\n")
@example(b"tls_server_config:\n  cert_file: server.crt\n  key_file: encrypted.key\n")
@example(b"tls_server_config:\n  cert_file: /dev/zero\n  key_file: server.key\n")
@example(b"tls_server_config:\n  cert_file: .\n  key_file: server.key\n")
@example(b"[" * 5000)
@example(b"rate_limit:\n  interval: 99999999999999999999999999h\n  burst: 1\n")
def test_web_config_any_bytes(pem_dir: Path, raw: bytes) -> None:
    web_parse(pem_dir, raw)


def test_web_config_refusals_name_the_problem(pem_dir: Path) -> None:
    f = pem_dir / "web.yml"
    for raw, problem in [
        (b"basic_auth_users:\n  a: $2b$04$" + b"a" * 53 + b"\n  a: $2b$04$" + b"b" * 53,
         "key 'a' appears twice"),
        (b"tls_server_config:\n  cert_file: server.crt\n  key_file: encrypted.key\n",
         "unencrypted PEM private key"),
        (b"tls_server_config:\n  cert_file: /dev/zero\n  key_file: server.key\n",
         "larger than 4 MiB"),
        (b"tls_server_config:\n  cert_file: .\n  key_file: server.key\n", "is not a file"),
    ]:
        with pytest.raises(ConfigError, match=problem):
            web_settings.parse(f, raw)


@given(st.one_of(st.none(), st.text(max_size=60), st.binary(max_size=60).map(
    lambda b: "Basic " + __import__("base64").b64encode(b).decode())))
@example("Basic !!!")
@example("basic " + "QTpC")  # case-insensitive scheme, as Go's Request.BasicAuth
@example("Basic \u00e9")
def test_authorization_header_never_raises(header: str | None) -> None:
    user, password = basic_auth(header)
    assert (user is None) == (password is None)
    if header == "basic QTpC":
        assert (user, password) == (b"A", b"B")


def test_a_broken_rules_config_is_named_by_every_command(monkeypatch, capsys) -> None:
    """The toolkit reads rules/config.yaml when a command needs it, not at import: a broken
    file is one clear line and exit 2, not a traceback."""
    import clusterscope.cli as cli
    from clusterscope.rules import rules_config as config

    def broken(path: Path = CONFIG) -> dict:
        raise RulesConfigError(f"{path}: ndb.memory_for: 'soon' is not a Prometheus duration")
    monkeypatch.setattr(config, "load_config", broken)
    config.shared.cache_clear()  # read once per process: this test's reading is the broken one
    try:
        for argv in (["changes", "--help"], ["compare", "--help"], ["lab", "status"]):
            assert cli.main(argv) == 2, argv
            err = capsys.readouterr().err
            assert err.startswith("clusterscope: ") and "'soon' is not a Prometheus" in err
            assert "Traceback" not in err
    finally:
        config.shared.cache_clear()
