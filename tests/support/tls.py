"""A throwaway CA and certificates for 127.0.0.1/localhost, for tests that serve HTTPS (and mutual TLS)."""

from __future__ import annotations

import datetime as dt
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


@dataclass(frozen=True, slots=True)
class TlsFiles:
    ca_cert: Path
    cert: Path
    key: Path


@dataclass(frozen=True, slots=True)
class MtlsFiles:
    server: TlsFiles  # CA, server certificate and key
    client_cert: Path  # a client certificate issued by the same CA
    client_key: Path
    stranger_cert: Path  # a client certificate from another CA (must be refused)
    stranger_key: Path


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


def _ca(common: str) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    now = dt.datetime.now(dt.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (x509.CertificateBuilder().subject_name(_name(common)).issuer_name(_name(common))
          .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
          .not_valid_before(now - dt.timedelta(minutes=5)).not_valid_after(now + dt.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                       content_commitment=False, key_encipherment=False, data_encipherment=False,
                                       key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
          .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
          .sign(ca_key, hashes.SHA256()))
    return ca, ca_key


def _leaf(ca: x509.Certificate, ca_key: ec.EllipticCurvePrivateKey, common: str, *, server: bool
          ) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    now = dt.datetime.now(dt.UTC)
    key = ec.generate_private_key(ec.SECP256R1())
    builder = (x509.CertificateBuilder().subject_name(_name(common)).issuer_name(ca.subject)
               .public_key(key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(now - dt.timedelta(minutes=5)).not_valid_after(now + dt.timedelta(days=1))
               .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH if server
                                                     else ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
               .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
                              critical=False))
    if server:
        builder = builder.add_extension(x509.SubjectAlternativeName(
            [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
    return builder.sign(ca_key, hashes.SHA256()), key


def _write(cert: x509.Certificate, key: ec.EllipticCurvePrivateKey, cert_path: Path, key_path: Path) -> None:
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))


def _make(directory: Path) -> tuple[TlsFiles, x509.Certificate, ec.EllipticCurvePrivateKey]:
    ca, ca_key = _ca("carnet test CA")
    cert, key = _leaf(ca, ca_key, "localhost", server=True)
    directory.mkdir(parents=True, exist_ok=True)
    files = TlsFiles(directory / "ca.pem", directory / "server.pem", directory / "server.key")
    files.ca_cert.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    _write(cert, key, files.cert, files.key)
    return files, ca, ca_key


def make_tls(directory: Path) -> TlsFiles:
    return _make(directory)[0]


def make_mtls(directory: Path) -> MtlsFiles:
    """``make_tls``, plus a client certificate from the same CA and one from a stranger CA."""
    server, ca, ca_key = _make(directory)
    files = MtlsFiles(server, directory / "client.pem", directory / "client.key",
                      directory / "stranger.pem", directory / "stranger.key")
    _write(*_leaf(ca, ca_key, "carnet test client", server=False), files.client_cert, files.client_key)
    _write(*_leaf(*_ca("stranger CA"), "stranger", server=False), files.stranger_cert, files.stranger_key)
    return files
