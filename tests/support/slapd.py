"""A real OpenLDAP server (Debian's ``slapd``) for the LDAP tests, under a directory of its own.

The directory has users under ``ou=people`` and ``groupOfNames`` groups under ``ou=groups`` of ``dc=example,dc=org``.
The database is loaded offline with ``slapadd`` before the server starts; a running server's groups are changed
with ``ldapmodify`` as the root DN. Run as root, the server drops to Debian's ``openldap`` user.
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import ldap
import pytest
from django_auth_ldap.config import GroupOfNamesType, LDAPSearch

from controlplane.core.permissions import ADMIN, OPERATOR
from tests.support import processes, workers

SLAPD = "/usr/sbin/slapd"
SLAPADD = "/usr/sbin/slapadd"
LDAPMODIFY = "/usr/bin/ldapmodify"
SUFFIX = "dc=example,dc=org"
ROOT_DN = f"cn=admin,{SUFFIX}"
ROOT_PASSWORD = "ldap-root-secret"
PEOPLE = f"ou=people,{SUFFIX}"
GROUPS = f"ou=groups,{SUFFIX}"


def missing() -> str | None:
    """Why the server cannot run here, or None."""
    for binary in (SLAPD, SLAPADD, LDAPMODIFY):
        if not Path(binary).exists():
            return f"{binary} is not installed (apt-get install -y slapd ldap-utils; bash .ci/services does it)"
    return None


def user_dn(uid: str) -> str:
    return f"uid={uid},{PEOPLE}"


def group_dn(cn: str) -> str:
    return f"cn={cn},{GROUPS}"


class Slapd:
    """slapd on ``ldap://127.0.0.1:<port>`` with the users and groups given to ``start``.

    Its directory is a fresh one under the system's temporary directory, removed by ``stop``: the ``openldap`` user
    must be able to reach it, which pytest's private temporary directories do not allow.
    """

    def __init__(self, port: int) -> None:
        self.state_dir = Path(tempfile.mkdtemp(prefix="mirrorplane-slapd-"))
        self.port = port
        self.url = f"ldap://127.0.0.1:{port}"
        self._process: subprocess.Popen[bytes] | None = None

    def start(self, users: dict[str, str], groups: dict[str, Iterable[str]]) -> None:
        """``users``: uid to password; ``groups``: cn to member uids."""
        data = self.state_dir / "data"
        data.mkdir(parents=True, exist_ok=True)
        conf = self.state_dir / "slapd.conf"
        conf.write_text(_config(data), encoding="utf-8")
        ldif = self.state_dir / "directory.ldif"
        ldif.write_text(_directory(users, groups), encoding="utf-8")
        subprocess.run([SLAPADD, "-q", "-f", str(conf), "-l", str(ldif)], check=True, capture_output=True)
        command = [SLAPD, "-f", str(conf), "-h", f"{self.url}/", "-d", "0"]
        if os.geteuid() == 0:
            _hand_over(self.state_dir, "openldap")
            command += ["-u", "openldap", "-g", "openldap"]
        log = (self.state_dir / "slapd.log").open("wb")
        self._process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        self._wait_until_listening(time.monotonic() + 30)

    def _wait_until_listening(self, deadline: float) -> None:
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                if self._process is not None and self._process.poll() is not None:
                    raise RuntimeError(f"slapd exited: {(self.state_dir / 'slapd.log').read_text()}") from None
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    def set_members(self, cn: str, uids: Iterable[str]) -> None:
        """Make ``uids`` the group's only members."""
        members = "".join(f"member: {user_dn(uid)}\n" for uid in uids) or f"member: {ROOT_DN}\n"
        change = f"dn: {group_dn(cn)}\nchangetype: modify\nreplace: member\n{members}"
        subprocess.run(
            [LDAPMODIFY, "-x", "-H", self.url, "-D", ROOT_DN, "-w", ROOT_PASSWORD],
            input=change.encode(),
            check=True,
            capture_output=True,
        )

    def stop(self) -> None:
        processes.stop(self._process)
        self._process = None
        shutil.rmtree(self.state_dir, ignore_errors=True)


def _hand_over(directory: Path, user: str) -> None:
    entry = pwd.getpwnam(user)
    directory.chmod(0o755)
    for path in [directory, *directory.rglob("*")]:
        shutil.chown(path, entry.pw_uid, entry.pw_gid)


def _config(data: Path) -> str:
    return "\n".join(
        [
            "include /etc/ldap/schema/core.schema",
            "include /etc/ldap/schema/cosine.schema",
            "include /etc/ldap/schema/inetorgperson.schema",
            "modulepath /usr/lib/ldap",
            "moduleload back_mdb",
            "database mdb",
            "maxsize 10485760",
            f"suffix {SUFFIX}",
            f"rootdn {ROOT_DN}",
            f"rootpw {ROOT_PASSWORD}",
            f"directory {data}",
            "",
        ]
    )


def _directory(users: dict[str, str], groups: dict[str, Iterable[str]]) -> str:
    entries = [
        f"dn: {SUFFIX}\nobjectClass: dcObject\nobjectClass: organization\ndc: example\no: Example\n",
        f"dn: {PEOPLE}\nobjectClass: organizationalUnit\nou: people\n",
        f"dn: {GROUPS}\nobjectClass: organizationalUnit\nou: groups\n",
    ]
    for uid, password in users.items():
        entries.append(
            f"dn: {user_dn(uid)}\nobjectClass: inetOrgPerson\nuid: {uid}\ncn: {uid.title()}\n"
            f"givenName: {uid.title()}\nsn: Example\n"
            f"mail: {uid}@example.org\nuserPassword: {password}\n"
        )
    for cn, uids in groups.items():
        # groupOfNames needs one member at least: an empty group holds the root DN.
        members = "".join(f"member: {user_dn(uid)}\n" for uid in uids) or f"member: {ROOT_DN}\n"
        entries.append(f"dn: {group_dn(cn)}\nobjectClass: groupOfNames\ncn: {cn}\n{members}")
    return "\n".join(entries)


@contextmanager
def running(port_offset: int, users: dict[str, str], groups: dict[str, Iterable[str]]) -> Iterator[Slapd]:
    """A slapd for a test module, on a port within this test worker's stride (skips when slapd is missing)."""
    if (why := missing()) is not None:
        pytest.skip(why)
    server = Slapd(workers.port(int(os.environ.get("MIRRORPLANE_TEST_PORT_BASE", "29092"))) + port_offset)
    server.start(users, groups)
    try:
        yield server
    finally:
        server.stop()


def log_in_through(settings: Any, server: Slapd, admins: str = "kafka-admins", operators: str = "kafka-ops") -> None:
    """Settings as docs/sso.md's LDAP example gives them, pointed at the server: members of ``admins`` are admins,
    of ``operators`` operators."""
    settings.MIRRORPLANE_LDAP = True
    settings.AUTH_LDAP_SERVER_URI = server.url
    settings.AUTH_LDAP_USER_DN_TEMPLATE = f"uid=%(user)s,{PEOPLE}"
    settings.AUTH_LDAP_GROUP_SEARCH = LDAPSearch(GROUPS, ldap.SCOPE_SUBTREE, "(objectClass=*)")
    settings.AUTH_LDAP_GROUP_TYPE = GroupOfNamesType()
    settings.MIRRORPLANE_LDAP_ROLE_GROUPS = {
        group_dn(admins).upper(): ADMIN,  # DNs compare case-insensitively
        group_dn(operators): OPERATOR,
    }
    settings.AUTHENTICATION_BACKENDS = [*settings.AUTHENTICATION_BACKENDS, "controlplane.accounts.backends.LdapBackend"]
