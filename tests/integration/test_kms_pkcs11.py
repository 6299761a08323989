"""``Pkcs11Kms`` against a real SoftHSM2 token (Debian package ``softhsm2``, installed by CI).

The module's fixture gives SoftHSM2 a private configuration and token directory, initialises two
tokens with ``softhsm2-util`` (one for the adapter, one for the wrong-PIN test on a token nobody
is logged in to), and builds the adapter. Without SoftHSM2 the module fails: it never skips.
"""

from __future__ import annotations

import base64
import dataclasses
import os
import secrets
import shutil
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pkcs11
import pkcs11.exceptions
import pytest
from pkcs11 import Attribute, KeyType, MechanismFlag, ObjectClass

from carnet.adapters.kms.hsm import Pkcs11Kms, kek_version
from carnet.errors import (
    CarnetError,
    DependencyUnavailable,
    InvalidInput,
    KmsDenied,
    KmsRejected,
    KmsUnavailable,
    UnwrapFailed,
)
from carnet.ports import Embedder, WrappedKey

_LIBRARY_CANDIDATES = (
    "/usr/lib/softhsm/libsofthsm2.so",
    "/usr/lib/x86_64-linux-gnu/softhsm/libsofthsm2.so",
    "/usr/lib/aarch64-linux-gnu/softhsm/libsofthsm2.so",
    "/usr/local/lib/softhsm/libsofthsm2.so",
)
TOKEN = "carnet-test"
OTHER_TOKEN = "carnet-other"


@dataclass(frozen=True)
class Hsm:
    library: str
    pin: str
    so_pin: str
    other_pin: str
    kms: Pkcs11Kms

    def session(self) -> pkcs11.Session:
        """A session of our own on the test token. PKCS#11 login is per process: the adapter
        being logged in, this session sees the private objects too."""
        return pkcs11.lib(self.library).get_token(token_label=TOKEN).open(rw=True)


def _library() -> str:
    for candidate in _LIBRARY_CANDIDATES:
        if os.path.isfile(candidate):
            return os.path.realpath(candidate)  # one spelling: the library is initialised once
    pytest.fail("SoftHSM2 is not installed (no libsofthsm2.so): apt-get install softhsm2")


@pytest.fixture(scope="module")
def hsm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hsm]:
    library = _library()
    util = shutil.which("softhsm2-util")
    if util is None:
        pytest.fail("SoftHSM2 is not installed (no softhsm2-util): apt-get install softhsm2")
    root = tmp_path_factory.mktemp("softhsm")
    (root / "tokens").mkdir(mode=0o700)
    conf = root / "softhsm2.conf"
    conf.write_text(f"directories.tokendir = {root / 'tokens'}\nobjectstore.backend = file\nlog.level = ERROR\n")
    previous = os.environ.get("SOFTHSM2_CONF")
    os.environ["SOFTHSM2_CONF"] = str(conf)  # read by C_Initialize, i.e. when the library loads
    pin, so_pin, other_pin = secrets.token_hex(8), secrets.token_hex(8), secrets.token_hex(8)
    for label, user_pin in ((TOKEN, pin), (OTHER_TOKEN, other_pin)):
        subprocess.run(
            [util, "--init-token", "--free", "--label", label, "--pin", user_pin, "--so-pin", so_pin],
            check=True,
            capture_output=True,
            env=os.environ | {"SOFTHSM2_CONF": str(conf)},
        )
    kms = Pkcs11Kms(library, token_label=TOKEN, user_pin=pin)
    kms.check()
    try:
        yield Hsm(library=library, pin=pin, so_pin=so_pin, other_pin=other_pin, kms=kms)
    finally:
        kms.close()
        if previous is None:
            os.environ.pop("SOFTHSM2_CONF", None)
        else:
            os.environ["SOFTHSM2_CONF"] = previous


def _flip(wrapped: WrappedKey, index: int = -1) -> WrappedKey:
    prefix, body = wrapped.ciphertext.rsplit(":", 1)
    raw = bytearray(base64.b64decode(body))
    raw[index] ^= 0x01
    return dataclasses.replace(wrapped, ciphertext=f"{prefix}:{base64.b64encode(bytes(raw)).decode()}")


def test_ensure_tenant_key_is_idempotent(hsm: Hsm) -> None:
    hsm.kms.ensure_tenant_key("idem")
    hsm.kms.ensure_tenant_key("idem")
    assert hsm.kms.latest_version("idem") == 1
    with hsm.session() as session:
        labels = [o[Attribute.LABEL] for o in session.get_objects({Attribute.CLASS: ObjectClass.SECRET_KEY})]
    assert labels.count("carnet-idem-v1") == 1
    assert not any(label.startswith("carnet-idem-v2") for label in labels)


def test_generate_and_unwrap_round_trip(hsm: Hsm) -> None:
    hsm.kms.ensure_tenant_key("acme")
    plaintext, wrapped = hsm.kms.generate_data_key("acme")
    assert len(plaintext) == 32
    assert wrapped.tenant == "acme"
    assert wrapped.kek_version == 1 == kek_version(wrapped.ciphertext)
    assert wrapped.ciphertext.startswith("hsm:v1:")
    assert plaintext not in wrapped.ciphertext.encode()
    assert hsm.kms.unwrap(wrapped) == plaintext
    other, other_wrapped = hsm.kms.generate_data_key("acme")
    assert other != plaintext
    assert other_wrapped.ciphertext != wrapped.ciphertext
    assert hsm.kms.unwrap(other_wrapped) == other


def test_tenant_keys_are_generated_in_the_token_and_never_extractable(hsm: Hsm) -> None:
    hsm.kms.ensure_tenant_key("vault13")
    with hsm.session() as session:
        key = session.get_key(ObjectClass.SECRET_KEY, KeyType.AES, label="carnet-vault13-v1")
        attrs = key.get_attributes(
            [
                Attribute.TOKEN,
                Attribute.PRIVATE,
                Attribute.SENSITIVE,
                Attribute.ALWAYS_SENSITIVE,
                Attribute.EXTRACTABLE,
                Attribute.NEVER_EXTRACTABLE,
                Attribute.LOCAL,
                Attribute.MODIFIABLE,
                Attribute.WRAP,
                Attribute.UNWRAP,
                Attribute.SIGN,
                Attribute.DERIVE,
                Attribute.ENCRYPT,
                Attribute.DECRYPT,
                Attribute.VALUE_LEN,
            ]
        )
        assert attrs == {
            Attribute.TOKEN: True,
            Attribute.PRIVATE: True,
            Attribute.SENSITIVE: True,
            Attribute.ALWAYS_SENSITIVE: True,
            Attribute.EXTRACTABLE: False,
            Attribute.NEVER_EXTRACTABLE: True,
            Attribute.LOCAL: True,  # generated inside the token, never imported
            Attribute.MODIFIABLE: False,
            Attribute.WRAP: False,
            Attribute.UNWRAP: False,
            Attribute.SIGN: False,
            Attribute.DERIVE: False,
            Attribute.ENCRYPT: True,
            Attribute.DECRYPT: True,
            Attribute.VALUE_LEN: 32,
        }
        # The token refuses to reveal the key value...
        with pytest.raises(pkcs11.exceptions.AttributeSensitive):
            key[Attribute.VALUE]
        # ...to wrap it out under a key we hold...
        wrapping = session.generate_key(
            KeyType.AES, 256, label="attacker", capabilities=MechanismFlag.WRAP | MechanismFlag.UNWRAP
        )
        assert isinstance(wrapping, pkcs11.types.WrapMixin)
        with pytest.raises(pkcs11.exceptions.PKCS11Error):
            wrapping.wrap_key(key, mechanism=pkcs11.Mechanism.AES_KEY_WRAP)
        # ...and to be made extractable.
        with pytest.raises(pkcs11.exceptions.PKCS11Error):
            key[Attribute.EXTRACTABLE] = True


def test_tenants_cannot_unwrap_each_others_keys(hsm: Hsm) -> None:
    hsm.kms.ensure_tenant_key("bank-a")
    hsm.kms.ensure_tenant_key("bank-b")
    _, wrapped_a = hsm.kms.generate_data_key("bank-a")
    _, wrapped_b = hsm.kms.generate_data_key("bank-b")
    with pytest.raises(UnwrapFailed):
        hsm.kms.unwrap(dataclasses.replace(wrapped_a, tenant="bank-b"))
    with pytest.raises(UnwrapFailed):
        hsm.kms.unwrap(dataclasses.replace(wrapped_b, tenant="bank-a"))
    with pytest.raises(KmsRejected):
        hsm.kms.generate_data_key("bank-unknown")
    with pytest.raises(UnwrapFailed):
        hsm.kms.unwrap(dataclasses.replace(wrapped_a, tenant="bank-unknown"))


def test_tampered_wrapped_keys_fail(hsm: Hsm) -> None:
    hsm.kms.ensure_tenant_key("tamper")
    _, wrapped = hsm.kms.generate_data_key("tamper")
    for index in (0, 11, 12, 30, -1):  # IV, ciphertext, tag
        with pytest.raises(UnwrapFailed) as err:
            hsm.kms.unwrap(_flip(wrapped, index))
        assert err.value.code == "key_unwrap_failed"
    bad = [
        dataclasses.replace(wrapped, kek_version=2),
        dataclasses.replace(wrapped, ciphertext=wrapped.ciphertext.replace("hsm:v1:", "hsm:v2:")),
        dataclasses.replace(wrapped, ciphertext=wrapped.ciphertext.replace("hsm:v1:", "vault:v1:")),
        dataclasses.replace(wrapped, ciphertext=wrapped.ciphertext[:-4]),
        dataclasses.replace(wrapped, ciphertext="hsm:v1:not base64!"),
    ]
    for item in bad:
        with pytest.raises(UnwrapFailed):
            hsm.kms.unwrap(item)
    # Moving the ciphertext under another version label (v2 exists now) fails too: AAD binds it.
    assert hsm.kms.rotate("tamper") == 2
    moved = WrappedKey("tamper", wrapped.ciphertext.replace("hsm:v1:", "hsm:v2:"), 2)
    with pytest.raises(UnwrapFailed):
        hsm.kms.unwrap(moved)


def test_rotate_rewrap_then_retire_old_versions(hsm: Hsm) -> None:
    kms = hsm.kms
    kms.ensure_tenant_key("rot")
    first, wrapped_1 = kms.generate_data_key("rot")
    assert kms.rotate("rot") == 2
    assert kms.latest_version("rot") == 2
    assert kms.unwrap(wrapped_1) == first  # old wrapped keys still open
    second, wrapped_2 = kms.generate_data_key("rot")
    assert wrapped_2.kek_version == 2
    kms.ensure_tenant_key("acme")
    _, other_tenant = kms.generate_data_key("acme")

    rewrapped = kms.rewrap([wrapped_1, wrapped_2, other_tenant])
    assert [w.kek_version for w in rewrapped] == [2, 2, other_tenant.kek_version]
    assert [w.tenant for w in rewrapped] == ["rot", "rot", "acme"]
    assert rewrapped[0].ciphertext.startswith("hsm:v2:")
    assert rewrapped[1] == wrapped_2  # already at the newest version: untouched
    assert rewrapped[2] == other_tenant
    assert kms.unwrap(rewrapped[0]) == first
    assert kms.unwrap(rewrapped[1]) == second

    with pytest.raises(InvalidInput):
        kms.set_min_decryption_version("rot", 3)
    kms.set_min_decryption_version("rot", 2)
    with pytest.raises(UnwrapFailed):
        kms.unwrap(wrapped_1)
    with pytest.raises(UnwrapFailed):
        kms.rewrap([wrapped_1])
    assert kms.unwrap(rewrapped[0]) == first
    with hsm.session() as session:
        labels = {o[Attribute.LABEL] for o in session.get_objects({Attribute.CLASS: ObjectClass.SECRET_KEY})}
    assert "carnet-rot-v1" not in labels  # destroyed in the token
    assert "carnet-rot-v2" in labels
    assert kms.rotate("rot") == 3
    assert kms.rewrap([rewrapped[0]])[0].kek_version == 3


def test_rewrap_refuses_a_batch_with_a_tampered_key(hsm: Hsm) -> None:
    hsm.kms.ensure_tenant_key("batch")
    _, good = hsm.kms.generate_data_key("batch")
    hsm.kms.rotate("batch")
    with pytest.raises(UnwrapFailed):
        hsm.kms.rewrap([good, _flip(good)])
    assert hsm.kms.rewrap([good])[0].kek_version == 2


def test_wrong_pin_fails_clearly_and_is_not_retried(hsm: Hsm) -> None:
    wrong = "0000" + secrets.token_hex(4)
    # A token this process is not logged in to: the token itself refuses the PIN.
    kms = Pkcs11Kms(hsm.library, token_label=OTHER_TOKEN, user_pin=wrong)
    with pytest.raises(KmsDenied) as err:
        kms.check()
    assert isinstance(err.value, DependencyUnavailable)
    assert (err.value.code, err.value.status) == ("kms_unavailable", 503)
    assert "PIN" in err.value.message
    assert isinstance(err.value.__cause__, pkcs11.exceptions.PinIncorrect)
    # Not tried again (HSMs lock the user after a few failures): refused without the token.
    with pytest.raises(KmsDenied, match="refused this PIN earlier") as again:
        kms.generate_data_key("acme")
    assert again.value.__cause__ is None
    # The right PIN still works.
    good = Pkcs11Kms(hsm.library, token_label=OTHER_TOKEN, user_pin=hsm.other_pin)
    good.check()
    good.ensure_tenant_key("other")
    data_key, wrapped = good.generate_data_key("other")
    assert good.unwrap(wrapped) == data_key
    good.close()
    # The token this process is logged in to: a different PIN is refused, not silently shared.
    with pytest.raises(KmsDenied, match="PIN differs"):
        Pkcs11Kms(hsm.library, token_label=TOKEN, user_pin=wrong).check()
    # The same PIN shares the login.
    twin = Pkcs11Kms(hsm.library, token_label=TOKEN, user_pin=hsm.pin)
    hsm.kms.ensure_tenant_key("acme")
    _, acme_key = hsm.kms.generate_data_key("acme")
    assert twin.unwrap(acme_key) == hsm.kms.unwrap(acme_key)
    for error in (err.value, again.value):
        for text in (str(error), repr(error), repr(error.context), repr(error.__cause__)):
            assert wrong not in text
            assert hsm.pin not in text


def test_pin_never_in_repr_errors_or_logs(hsm: Hsm, capfd: pytest.CaptureFixture[str]) -> None:
    kms = Pkcs11Kms(hsm.library, token_label=TOKEN, user_pin=hsm.pin)
    assert hsm.pin not in repr(kms)
    assert hsm.pin not in str(vars(kms))
    assert "carnet-test" in repr(kms)
    errors: list[BaseException] = []
    for call in (
        lambda: kms.unwrap(WrappedKey("acme", "hsm:v9:AAAA", 9)),
        lambda: kms.generate_data_key("nobody"),
        lambda: Pkcs11Kms(hsm.library, token_label="no-such-token", user_pin=hsm.pin).check(),
        lambda: Pkcs11Kms("/nonexistent/libpkcs11.so", token_label=TOKEN, user_pin=hsm.pin).check(),
    ):
        with pytest.raises((KmsRejected, KmsUnavailable)) as err:
            call()
        errors.append(err.value)
    assert isinstance(errors[2], KmsUnavailable)
    assert isinstance(errors[3], KmsUnavailable)
    kms.ensure_tenant_key("acme")
    kms.rotate("acme")
    kms.check()
    out, errout = capfd.readouterr()
    for text in [out, errout, *(f"{e!s} {e!r} {getattr(e, 'context', '')}" for e in errors)]:
        assert hsm.pin not in text
        assert hsm.so_pin not in text
    assert "kms_key_rotated" in out + errout  # the logs were captured


def test_recovers_from_a_lost_session(hsm: Hsm) -> None:
    hsm.kms.ensure_tenant_key("acme")
    data_key, wrapped = hsm.kms.generate_data_key("acme")
    # Close the adapter's session behind its back (as a token reset would): logs the process out.
    session = hsm.kms._connection._session
    assert session is not None
    session.close()
    assert hsm.kms.unwrap(wrapped) == data_key  # reopened and logged in again by itself
    hsm.kms.close()
    assert hsm.kms.unwrap(wrapped) == data_key


def test_concurrent_calls_share_the_session_safely(hsm: Hsm) -> None:
    hsm.kms.ensure_tenant_key("threads")
    failures: list[BaseException] = []

    def worker() -> None:
        try:
            for _ in range(25):
                data_key, wrapped = hsm.kms.generate_data_key("threads")
                assert hsm.kms.unwrap(wrapped) == data_key
        except BaseException as exc:
            failures.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not failures


def test_bad_arguments() -> None:
    with pytest.raises(ValueError):
        Pkcs11Kms(token_label=TOKEN, user_pin="1234", key_template="carnet-{tenant}")
    with pytest.raises(ValueError):
        Pkcs11Kms(token_label=TOKEN, user_pin="")
    kms = Pkcs11Kms(token_label=TOKEN, user_pin="1234")
    with pytest.raises(InvalidInput):
        kms.ensure_tenant_key("../etc")
    with pytest.raises(UnwrapFailed):
        kek_version("vault:v1:abc")


def test_custom_key_template(hsm: Hsm) -> None:
    kms = Pkcs11Kms(hsm.library, token_label=TOKEN, user_pin=hsm.pin, key_template="bank/{version}/{tenant}")
    kms.ensure_tenant_key("acme")  # separate from the default template's acme keys
    assert kms.latest_version("acme") == 1
    data_key, wrapped = kms.generate_data_key("acme")
    assert kms.unwrap(wrapped) == data_key
    with pytest.raises(UnwrapFailed):
        hsm.kms.unwrap(wrapped)
    assert kms.key_label("acme", 1) == "bank/1/acme"


@pytest.mark.slow
def test_the_service_runs_on_the_hsm(hsm: Hsm, tmp_path: Path, embedder: Embedder) -> None:
    """Bootstrap wired to the token: records sealed under data keys wrapped by an HSM-held key."""
    from carnet.bootstrap.wiring import build
    from carnet.services.memories import reads as memories
    from carnet.services.memories.remember import NewMemory, remember
    from carnet.settings.root import Settings

    settings = Settings(data_dir=tmp_path / "data", key_dir=tmp_path / "keys", kms_backend="pkcs11",
                        pkcs11={"library": hsm.library, "token_label": TOKEN, "user_pin": hsm.pin})
    c = build(settings, embedder=embedder)
    try:
        remember(c.deps, tenant="hsm-bank", subject_id="CLI-1", actor="t",
                 items=[NewMemory(text="Le client a un crédit immobilier.")])
        assert memories.list_memories(c.deps, tenant="hsm-bank", subject_id="CLI-1").items[0].text == (
            "Le client a un crédit immobilier.")
        assert hsm.kms.latest_version("hsm-bank") == 1
    finally:
        c.close()


def test_destroy_tenant_key_removes_every_version_from_the_token(hsm: Hsm) -> None:
    hsm.kms.ensure_tenant_key("purge")
    _, wrapped = hsm.kms.generate_data_key("purge")
    hsm.kms.rotate("purge")
    assert hsm.kms.destroy_tenant_key("purge") is True
    with pytest.raises(CarnetError):
        hsm.kms.unwrap(wrapped)
    assert hsm.kms.destroy_tenant_key("purge") is False
