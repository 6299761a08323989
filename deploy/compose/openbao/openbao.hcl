# OpenBao for compose.yaml: a single node with integrated storage and a TLS listener (never -dev).
# Production sites add auto-unseal (a `seal "pkcs11"` or transit stanza) and ship the audit log to their SIEM.
ui            = false
disable_mlock = true  # recommended with integrated storage; swap must be off or encrypted on the host
api_addr      = "https://openbao:8200"
cluster_addr  = "https://openbao:8201"

storage "raft" {
  path    = "/openbao/file"
  node_id = "openbao-1"
}

listener "tcp" {
  address         = "0.0.0.0:8200"
  cluster_address = "0.0.0.0:8201"
  tls_cert_file   = "/openbao/tls/openbao.pem"
  tls_key_file    = "/run/secrets/openbao_tls_key"
  tls_min_version = "tls12"
}

# Every request and answer, HMAC'd by OpenBao (never in clear), to a file on its own volume. OpenBao 2.x
# takes audit devices from its configuration only; the openbao Ansible role checks one writes here.
audit "file" "file" {
  options {
    file_path = "/openbao/audit/audit.log"
  }
}
