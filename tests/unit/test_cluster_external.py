"""Connecting to a user's cluster (checker/cluster/external.py) without one: the flags' checks, Java properties
as Kafka's tools read them, the credentials never printed, reach()'s one-line errors. A stand-in speaks the
helper's protocol; one real JVM (cheap, no cluster) only when the newest release's client jars are cached."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest
from kreassign.checker.cluster import external
from kreassign.checker.cluster.admin import (
    HIDDEN,
    AdminCreateError,
    AdminError,
    AdminRequestError,
    ClusterAdmin,
)
from kreassign.checker.cluster.external import ClusterUnreachable
from kreassign.checker.implementations.kafka import releases

from kreassign.errors import UsageError

PASSWORD = "pa55-w0rd!x"
JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" '
        f'password="{PASSWORD}";')


# -- --bootstrap-server -----------------------------------------------------------------------------------


@pytest.mark.parametrize("text, expected", [
    ("broker1:9092", "broker1:9092"),
    (" a.example.com:9092 , 10.0.0.7:19092 ", "a.example.com:9092,10.0.0.7:19092"),
    ("[::1]:9092,kafka_2:1", "[::1]:9092,kafka_2:1"),
    ("h:65535", "h:65535"),
])
def test_a_good_bootstrap_is_the_list_without_spaces(text, expected):
    assert external.check_bootstrap(text) == expected


@pytest.mark.parametrize("text, words", [
    ("", "expected HOST:PORT[,HOST:PORT...], got an empty value"),
    ("   ", "got an empty value"),
    ("broker1", "'broker1' is not HOST:PORT"),
    ("broker1:", "'broker1:' is not HOST:PORT"),
    ("PLAINTEXT://broker1:9092", "'PLAINTEXT://broker1:9092' is not HOST:PORT"),
    ("h:0", "port 0 of 'h:0' is not in 1..65535"),
    ("h:65536", "port 65536 of 'h:65536' is not in 1..65535"),
    ("h:1,", "an empty address in 'h:1,'"),
    ("h:x9", "'h:x9' is not HOST:PORT"),
])
def test_a_bad_bootstrap_is_a_usage_error_naming_the_flag(text, words):
    with pytest.raises(UsageError) as e:
        external.check_bootstrap(text)
    message = str(e.value)
    assert message.startswith("--bootstrap-server: ") and words in message and "\n" not in message
    assert e.value.exit_code == 2


# -- --command-config -------------------------------------------------------------------------------------


def test_a_missing_file_a_directory_and_bad_escapes_are_usage_errors_naming_the_flag(tmp_path):
    cases = [(tmp_path / "nope.properties", "no such file"), (tmp_path, "is not a regular file")]
    bad = tmp_path / "bad.properties"
    bad.write_text("a=1\n# a comment\nsasl.mechanism=PL\\u00zzAIN\n")
    cases.append((bad, "line 3: malformed \\uxxxx escape"))
    for path, words in cases:
        with pytest.raises(UsageError) as e:
            external.check_command_config(path)
        assert str(e.value).startswith("--command-config: ") and words in str(e.value), str(e.value)
        assert "\n" not in str(e.value)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_an_unreadable_file_is_a_usage_error(tmp_path):
    f = tmp_path / "secret.properties"
    f.write_text("a=1\n")
    f.chmod(0)
    with pytest.raises(UsageError, match="--command-config: cannot read .*Permission denied"):
        external.check_command_config(f)


def test_properties_are_read_as_java_reads_them(tmp_path):
    f = tmp_path / "client.properties"
    f.write_bytes(
        b"# comment\n! another\n"
        b"security.protocol = SASL_SSL\n"
        b"sasl.mechanism:SCRAM-SHA-512\n"
        b"spaced value with blanks  \n"
        b"sasl.jaas.config=org.example.Login required \\\n"
        b"    username=\"bob\" \\\n"
        b"    password=\"x\";\n"
        b"escaped\\=key=tab\\there\\u0041\n"
        b"latin=caf\xe9\n"
        b"empty=\n"
        b"  \n")
    path, props = external.check_command_config(f)
    assert path == f.resolve()
    assert props == {
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-512",
        "spaced": "value with blanks  ",
        "sasl.jaas.config": 'org.example.Login required username="bob" password="x";',
        "escaped=key": "tab\thereA",
        "latin": "caf\u00e9",  # ISO 8859-1, as Properties.load(InputStream)
        "empty": "",
    }


def test_a_comment_ending_in_a_backslash_does_not_continue():
    assert external.parse_properties("# note \\\na=1\nb=2\\\\\nc=3") == {"a": "1", "b": "2\\", "c": "3"}


# -- secrets ----------------------------------------------------------------------------------------------


def test_the_secrets_are_passwords_keys_jaas_lines_and_the_credentials_inside_them():
    props = {"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN", "sasl.jaas.config": JAAS,
             "ssl.truststore.password": "trust-pw ", "ssl.keystore.key": "-----BEGIN KEY-----abc",
             "sasl.oauthbearer.client.credentials.client.secret": "oauth-secret", "ssl.truststore.type": "PEM",
             "listener.name.x.scram-sha-256.sasl.jaas.config": "Scram required username=carol password=c-pw;"}
    found = set(external.secrets_of(props))
    assert {JAAS, "alice", PASSWORD, "trust-pw ", "trust-pw", "-----BEGIN KEY-----abc", "oauth-secret",
            "carol", "c-pw"} <= found
    assert not found & {"SASL_SSL", "PLAIN", "PEM"}


def test_redaction_hides_every_secret_and_a_short_one_only_where_it_stands_alone(tmp_path):
    admin = ClusterAdmin(["true"], tmp_path, tmp_path / "out.log", secrets=["kafka", PASSWORD, PASSWORD + "-longer"])
    text = f"user kafka in org.apache.kafka.clients or kafka_x failed with {PASSWORD}-longer and '{PASSWORD}'"
    assert admin.redact(text) == \
        f"user {HIDDEN} in org.apache.kafka.clients or kafka_x failed with {HIDDEN} and '{HIDDEN}'"
    assert admin.redact('username="kafka". kafka.') == f'username="{HIDDEN}". {HIDDEN}.'
    assert ClusterAdmin(["true"], tmp_path, tmp_path / "o.log").redact(text) == text  # no secrets: unchanged


# -- a ClusterAdmin with the file's secrets, through a stand-in for the helper ----------------------------

LEAKY_HELPER = r"""
import json, sys
secret = open(sys.argv[1]).read()  # the whole properties file, as a careless error message might echo it
for line in sys.stdin:
    req = json.loads(line)
    if req["op"] == "die":
        print("fatal: could not log in with " + secret, file=sys.stderr, flush=True)
        sys.exit(1)
    if req["op"] == "create":
        reply = {"ok": False, "error_class": "ConfigException", "create_failed": True,
                 "error": "the Admin client could not be created: Invalid value " + secret}
    elif req["op"] == "configs":
        reply = {"ok": True, "result": {"broker": {"1": {"error_class": "X", "error": "bad " + secret}}}}
    else:
        reply = {"ok": False, "error_class": "SaslAuthenticationException", "error": "refused " + secret}
    print(json.dumps(reply), flush=True)
"""


@pytest.fixture
def command_config(tmp_path) -> Path:
    f = tmp_path / "client.properties"
    f.write_text(f"security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\nsasl.jaas.config={JAAS}\n"
                 f"ssl.truststore.password={PASSWORD}-trust\n")
    return f


def _leaky(tmp_path: Path, command_config: Path) -> ClusterAdmin:
    _, props = external.check_command_config(command_config)
    admin = ClusterAdmin([sys.executable, "-c", LEAKY_HELPER, str(command_config)], tmp_path, tmp_path / "out.log",
                         secrets=external.secrets_of(props))
    admin.REPLY_MARGIN_S = 5
    return admin


def test_no_error_of_a_clusteradmin_shows_the_files_password(tmp_path, command_config):
    with _leaky(tmp_path, command_config) as admin:
        with pytest.raises(AdminRequestError) as refused:
            admin.call("describe_cluster")
        with pytest.raises(AdminCreateError) as create:
            admin.call("create")
        result = admin.call("configs")
        with pytest.raises(AdminError) as died:
            admin.call("die")
    texts = [str(refused.value), refused.value.message, str(create.value), str(died.value),
             result["broker"]["1"]["error"]]
    assert "fatal: could not log in" in str(died.value)  # the helper's output is there, hidden where needed
    for text in texts:
        assert PASSWORD not in text and "alice" not in text and HIDDEN in text, text


def test_reach_turns_failures_into_one_line_without_the_password(tmp_path, command_config):
    with _leaky(tmp_path, command_config) as admin:
        with pytest.raises(ClusterUnreachable) as refused:
            external.reach(admin, "b:9092", 7.4)
        with pytest.raises(ClusterUnreachable) as died:
            admin.call = lambda *a, **k: (_ for _ in ()).throw(
                AdminError(f"the cluster's Admin helper ended; its output ends:\nline\n{HIDDEN} failed"))
            external.reach(admin, "b:9092", 3)
    assert str(refused.value).startswith("cannot reach the cluster at b:9092 within 7 s: "
                                         "SaslAuthenticationException: refused ")
    assert str(died.value) == (f"cannot reach the cluster at b:9092 within 3 s: the cluster's Admin helper ended; "
                               f"its output ends: {HIDDEN} failed")
    for e in (refused.value, died.value):
        assert "\n" not in str(e) and PASSWORD not in str(e) and e.exit_code == 3


class _Refusing:
    """An admin whose client could not be created, for reach()."""

    def __init__(self, message: str, command_config: Path | None):
        self.message, self.command_config = message, command_config

    def describe_cluster(self, timeout_s):
        raise AdminCreateError("describe_cluster", "ConfigException", self.message)


def test_reach_blames_the_command_config_for_properties_the_client_refuses(tmp_path):
    bad = "the Admin client could not be created: Invalid value BOGUS for configuration security.protocol"
    with pytest.raises(UsageError) as e:
        external.reach(_Refusing(bad, tmp_path / "c.properties"), "b:1", 5)
    assert str(e.value) == f"--command-config: {bad}" and e.value.exit_code == 2
    dns = "the Admin client could not be created: No resolvable bootstrap urls given in bootstrap.servers"
    with pytest.raises(ClusterUnreachable, match="within 5 s: ConfigException: .*No resolvable bootstrap"):
        external.reach(_Refusing(dns, tmp_path / "c.properties"), "b:1", 5)


def test_the_helper_gets_the_files_path_never_its_contents(tmp_path, command_config):
    argv = external.helper_argv("java", tmp_path / "classes", tmp_path / "lib", tmp_path, "b:9092",
                                command_config)
    assert argv[-3:] == ["KreassignClusterAdmin", "b:9092", str(command_config)]
    assert "-Xmx128m" in argv and f"-Dkreassign.cluster={tmp_path}" in argv
    assert argv[argv.index("-cp") + 1] == f"{tmp_path / 'classes'}:{tmp_path / 'lib'}/*"
    assert not any(PASSWORD in a or "alice" in a for a in argv)


def test_one_line_keeps_the_first_and_last_lines_within_the_limit():
    assert external.one_line("a\n\n  b   c  \nlast one") == "a last one"
    assert len(external.one_line("x" * 500)) == 300


# -- the real helper, without a cluster: a client Kafka refuses to create ----------------------------------


def _jvm_ready() -> bool:
    return releases.cached(releases.NEWEST) is not None and shutil.which("java") is not None \
        and shutil.which("javac") is not None


@pytest.mark.skipif(not _jvm_ready(), reason="needs a JDK and the newest release's client jars in the cache")
def test_the_real_helper_answers_a_refused_configuration_without_the_password(tmp_path):
    f = tmp_path / "client.properties"
    f.write_text(f"security.protocol=BOGUS\nsasl.jaas.config={JAAS}\nssl.key.password={PASSWORD}\n")
    with external.connect("127.0.0.1:9", f) as admin:
        with pytest.raises(UsageError) as e:
            external.reach(admin, "127.0.0.1:9", 5)
        directory, helper = admin.directory, admin._proc
    assert str(e.value).startswith("--command-config: the Admin client could not be created: Invalid value BOGUS "
                                   "for configuration security.protocol")
    assert PASSWORD not in str(e.value)
    assert not directory.exists() and helper is not None and helper.poll() is not None  # closed: killed, reaped
